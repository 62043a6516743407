"""The capture strategies; what they share (stand-in tensors, pytrees, the recorder) is tested here."""
