"""What every agent shares: persisted report sequence numbers."""
