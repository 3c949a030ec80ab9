"""What the pages show, shaped from the C-PS's RFC 7951 data: pure functions, no I/O."""
