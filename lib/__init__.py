"""The reproduction engine of the Partial-Residuals book (see README.md)."""
