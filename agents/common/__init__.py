"""What every agent shares: persisted report sequence numbers, date-and-time, the users of
its own servers and the serve loop."""
