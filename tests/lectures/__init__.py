"""The lecture scripts run, and what they print is true."""
