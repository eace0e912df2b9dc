"""An example processor package for the feed function's image (replace it with your own)."""
