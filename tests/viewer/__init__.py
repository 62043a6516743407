"""The viewer and notebook display."""
