"""Unit tests of the C-NMA (agents/cnma)."""
