// A statically linked program that does nothing: the floor of fork+exec+wait
// on this machine (no dynamic loader), shown next to /bin/true (dynamic).
int main() { return 0; }
