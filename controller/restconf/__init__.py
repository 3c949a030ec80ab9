"""RESTCONF northbound (RFC 8040, RFC 8072, RFC 8527): a WSGI application on cheroot."""
