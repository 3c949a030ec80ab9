"""Unit tests of agents.csma."""
