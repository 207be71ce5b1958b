// Filled in by its own issue; see README.md for what this package will hold.
export {};
