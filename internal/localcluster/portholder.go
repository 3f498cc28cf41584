package localcluster

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PortHolder describes what listens on a TCP port on this machine, from
// /proc: "python3 -m http.server 8080 (pid 4242) on 0.0.0.0:8080". It
// returns "" when nothing listens there, and a description without the
// program when the listening socket belongs to no process it can see.
// Messages about a port the cluster or the demo cannot use show it, so
// the user knows what to stop.
func PortHolder(port int) string {
	var found []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, l := range listeners(table, port) {
			who := "a socket of no visible process"
			if pid, cmd := socketOwner(l.inode); pid != 0 {
				who = fmt.Sprintf("%s (pid %d)", cmd, pid)
			}
			found = append(found, who+" on "+net.JoinHostPort(l.addr, strconv.Itoa(port)))
		}
	}
	return strings.Join(found, "; ")
}

type procListener struct {
	addr  string
	inode string
}

// listeners reads the sockets of a /proc/net/tcp table in state LISTEN
// on port.
func listeners(table string, port int) []procListener {
	f, err := os.Open(table)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []procListener
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		hostHex, portHex, ok := strings.Cut(fields[1], ":")
		p, err := strconv.ParseUint(portHex, 16, 16)
		if !ok || err != nil || int(p) != port {
			continue
		}
		out = append(out, procListener{addr: procAddr(hostHex), inode: fields[9]})
	}
	return out
}

// procAddr decodes /proc/net/tcp's address: 32-bit words in host (little
// endian) byte order.
func procAddr(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil || len(b)%4 != 0 {
		return h
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b).String()
}

// socketOwner finds the process holding socket inode and its command line.
func socketOwner(inode string) (int, string) {
	want := "socket:[" + inode + "]"
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(p, "fd", fd.Name())); err == nil && target == want {
				pid, _ := strconv.Atoi(filepath.Base(p))
				cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
				cmd := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
				if cmd == "" {
					cmd = "process"
				}
				return pid, cmd
			}
		}
	}
	return 0, ""
}
