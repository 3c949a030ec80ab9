"""Operator commands: ``catsctl show | config | explain | audit`` over RESTCONF."""
