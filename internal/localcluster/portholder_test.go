package localcluster

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestPortHolder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	got := PortHolder(port)
	want := "(pid " + strconv.Itoa(os.Getpid()) + ") on 127.0.0.1:" + strconv.Itoa(port)
	if !strings.Contains(got, want) || !strings.Contains(got, "localcluster.test") {
		t.Errorf("PortHolder(%d) = %q, want this test binary, %q", port, got, want)
	}
	_ = l.Close()
	if got := PortHolder(port); got != "" {
		t.Errorf("PortHolder of a closed port = %q", got)
	}
}
