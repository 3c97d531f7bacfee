"""The config sections, one module per stage, composed into one `Config` by `postgame.config`."""
