"""The project used as its users use it: installed, from the command line, the docs' and examples' code run."""
