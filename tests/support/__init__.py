"""What several test folders share: sample tables, corpora and helpers; no tests here."""
