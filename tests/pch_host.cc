// Compiles the tests' precompiled header (cmake/distflow_pch.cmake); not a test.
int main() { return 0; }
