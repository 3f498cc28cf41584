package main

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// listenFDsEnv says how many sockets the process that started the broker
// passed to it as open files 3, 4, …
const listenFDsEnv = "KAIROLOG_LISTEN_FDS"

// inheritedSockets are TCP sockets that the process starting the broker
// bound for it, by local address. A listener whose address one of them is
// bound to is served on that socket instead of being bound again, so
// whoever picks a broker's ports (a test starting brokers on free ports)
// can hold them from the moment it picks them: no other process can take
// a port in between. A socket may be passed bound only; the broker listens
// on it.
type inheritedSockets map[string]*os.File

// takeInheritedSockets reads the sockets named by KAIROLOG_LISTEN_FDS and
// clears the variable.
func takeInheritedSockets() (inheritedSockets, error) {
	v, ok := os.LookupEnv(listenFDsEnv)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(listenFDsEnv)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 64 {
		return nil, fmt.Errorf("%s=%q: want how many sockets were passed from file 3 on", listenFDsEnv, v)
	}
	s := make(inheritedSockets, n)
	for fd := 3; fd < 3+n; fd++ {
		syscall.CloseOnExec(fd)
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("%s: file %d is not a socket: %w", listenFDsEnv, fd, err)
		}
		addr, ok := sockaddrString(sa)
		if !ok {
			s.close()
			return nil, fmt.Errorf("%s: file %d is not a TCP/IP socket", listenFDsEnv, fd)
		}
		s[addr] = os.NewFile(uintptr(fd), addr)
	}
	return s, nil
}

func sockaddrString(sa syscall.Sockaddr) (string, bool) {
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		return (&net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}).String(), true
	case *syscall.SockaddrInet6:
		return (&net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}).String(), true
	}
	return "", false
}

// listen serves addr on the inherited socket bound to it, or else binds it.
func (s inheritedSockets) listen(addr string) (net.Listener, error) {
	f := s.take(addr)
	if f == nil {
		return net.Listen("tcp", addr)
	}
	defer f.Close()
	fd := int(f.Fd())
	// As net.Listen sets it: a restarted broker binds the port again while
	// connections of the stopped one linger in TIME_WAIT.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return nil, fmt.Errorf("inherited socket %s: %w", addr, err)
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		return nil, fmt.Errorf("inherited socket %s: listen: %w", addr, err)
	}
	return net.FileListener(f)
}

// has reports an inherited socket bound to addr.
func (s inheritedSockets) has(addr string) bool { return s[s.key(addr)] != nil }

func (s inheritedSockets) take(addr string) *os.File {
	k := s.key(addr)
	f := s[k]
	delete(s, k)
	return f
}

// key is addr as a socket's local address reads ("127.0.0.5:4242"); only
// numeric addresses with a port can name an inherited socket.
func (s inheritedSockets) key(addr string) string {
	if len(s) == 0 {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	ip := net.ParseIP(host)
	p, err := strconv.Atoi(port)
	if ip == nil || err != nil || p == 0 {
		return ""
	}
	return (&net.TCPAddr{IP: ip, Port: p}).String()
}

// unused fails when a passed socket serves no listener: the broker was
// started with addresses other than the ones its starter holds for it.
func (s inheritedSockets) unused() error {
	if len(s) == 0 {
		return nil
	}
	addrs := make([]string, 0, len(s))
	for a := range s {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	s.close()
	return fmt.Errorf("%s: the sockets bound to %v serve none of the listen addresses", listenFDsEnv, addrs)
}

func (s inheritedSockets) close() {
	for k, f := range s {
		f.Close()
		delete(s, k)
	}
}
