package heldport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// ListenFDsEnv tells a broker process how many sockets it was passed as
// open files 3, 4, …: the broker serves each listener whose address one
// of them is bound to on that socket instead of binding it again.
const ListenFDsEnv = "KAIROLOG_LISTEN_FDS"

// Bound holds a port for a broker that runs in another process: a socket
// bound to the port but not listening. A connection to the port is
// refused, as to any closed port, yet no other socket can bind it, and
// the kernel picks it for no one else's port 0. Passed to the broker's
// process (Files, ListenFDsEnv), the socket becomes the broker's
// listener, so the port is held from the moment it is picked until the
// broker serves on it.
type Bound struct {
	addr string
	f    *os.File
}

// Bind holds a free port on host, an IPv4 address.
func Bind(host string) (*Bound, error) { return bind(host, 0, false) }

// Hold holds a free port on host, an IPv4 address, for a program that binds
// the port itself and cannot be handed a socket (etcd, kube-apiserver,
// kubectl: a Go listener, which sets SO_REUSEADDR). The socket is bound as
// such a listener binds, so the program binds the port explicitly while it
// is held, yet the kernel picks it for no one's port 0 and no outgoing
// connection. Close it once the program listens, or keep it while the
// program may bind the port again (a restarted port-forward).
func Hold(host string) (*Bound, error) { return bind(host, 0, true) }

// HoldAt holds addr, "host:port", as Hold holds a port it picks: for a
// program that binds it itself (the same port on several loopback
// addresses, say).
func HoldAt(addr string) (*Bound, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	return bind(host, port, true)
}

// Rebind holds addr again for a broker that stopped and will start on the
// same address. Connections the stopped broker closed may linger on the
// port in TIME_WAIT; then the socket is bound as Go's listeners bind
// (SO_REUSEADDR), which still keeps the port from the kernel's choice of
// free ports, though no longer from a listener bound to it explicitly.
func Rebind(addr string) (*Bound, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	return bind(host, port, false)
}

func splitAddr(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("heldport: port of %s: %w", addr, err)
	}
	return host, p, nil
}

func bind(host string, port int, reuse bool) (*Bound, error) {
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return nil, fmt.Errorf("heldport: %q is not an IPv4 address", host)
	}
	sa := &syscall.SockaddrInet4{Port: port}
	copy(sa.Addr[:], ip)
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("heldport: socket: %w", err)
	}
	if reuse {
		err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	}
	if err == nil {
		err = syscall.Bind(fd, sa)
	}
	if errors.Is(err, syscall.EADDRINUSE) && port != 0 && !reuse {
		if err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err == nil {
			err = syscall.Bind(fd, sa)
		}
	}
	if err == nil {
		var got syscall.Sockaddr
		if got, err = syscall.Getsockname(fd); err == nil {
			sa = got.(*syscall.SockaddrInet4)
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("heldport: bind %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	addr := net.JoinHostPort(net.IP(sa.Addr[:]).String(), strconv.Itoa(sa.Port))
	return &Bound{addr: addr, f: os.NewFile(uintptr(fd), addr)}, nil
}

// Addr is the held address, "127.0.0.5:4242".
func (b *Bound) Addr() string { return b.addr }

// Port is the held port.
func (b *Bound) Port() int {
	_, port, _ := net.SplitHostPort(b.addr)
	p, _ := strconv.Atoi(port)
	return p
}

// Close gives the port up (the broker's process keeps its copy).
func (b *Bound) Close() error { return b.f.Close() }

// Pass hands socks to cmd, not yet started, as its first extra files
// (3, 4, …), counted in ListenFDsEnv. Close them once cmd has started:
// its process holds the ports then.
func Pass(cmd *exec.Cmd, socks ...*Bound) error {
	if len(cmd.ExtraFiles) > 0 {
		return errors.New("heldport: the sockets must be the first extra files")
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, ListenFDsEnv+"="+strconv.Itoa(len(socks)))
	for _, s := range socks {
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.f)
	}
	return nil
}
