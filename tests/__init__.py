"""The test suite, arranged like the package (docs/layout.md, "tests/"). Every folder is a package, so a test module
is imported by its full name (``tests.ir.test_parser``) and two folders may hold files of the same name."""
