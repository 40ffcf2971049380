"""CLI command modules: each exposes configure(parser) and run(args)."""
