package controlplane

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// How a component gets its ports without racing other processes for them.
//
// kube-apiserver cannot be told to bind port 0 (its --secure-port must be
// 1–65535), and none of the components accepts a listener from its parent,
// so the launcher asks the kernel for a free port ([freePort]), releases it
// and passes the number on. Another process may take the port in between.
// Two checks make that harmless:
//
//   - a component is ready only once its own process holds a listening
//     socket on each of its ports ([listens]), so a health check answered by
//     whoever took the port is never mistaken for the component's;
//   - a component whose log says that one of its ports was taken ("bind:
//     address already in use") is stopped and started again on fresh ports,
//     at most maxPortAttempts times in all.

// maxPortAttempts bounds the starts of one component on fresh ports.
const maxPortAttempts = 5

// portUses names the ports a component listens on, as keys of
// [ControlPlane.Ports].
func portUses(name string) []string {
	if name == Etcd {
		return []string{"etcd-client", "etcd-peer"}
	}
	return []string{name}
}

// freePort asks the kernel for a free loopback port. The port is released
// before it returns: see the comment at the top of this file.
func freePort(string) (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("controlplane: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portTakenError says that a component could not listen on a port because
// another process held it.
type portTakenError struct {
	component string
	port      int
}

func (e *portTakenError) Error() string {
	return fmt.Sprintf("controlplane: %s could not listen on 127.0.0.1:%d: another process holds the port", e.component, e.port)
}

// bindFailure returns the first of ports that log reports as taken, in the
// words of Go's net package ("listen tcp 127.0.0.1:PORT: bind: address
// already in use"), which every component prints when it gives up.
func bindFailure(log []byte, ports []int) (int, bool) {
	for _, port := range ports {
		if bytes.Contains(log, []byte("127.0.0.1:"+strconv.Itoa(port)+": bind: address already in use")) {
			return port, true
		}
	}
	return 0, false
}

// listens reports whether process pid holds a TCP socket listening on port
// (on any local address). It reads /proc, so it sees the sockets of the
// launcher's network namespace.
func listens(pid, port int) (bool, error) {
	sockets, err := listeningSockets(port)
	if err != nil || len(sockets) == 0 {
		return false, err
	}
	return holdsAny(pid, sockets), nil
}

// portHolders returns the pids of the processes that hold a TCP socket
// listening on port, among those whose file descriptors the launcher may
// read. It scans every process, so it is for error messages and tests.
func portHolders(port int) ([]int, error) {
	sockets, err := listeningSockets(port)
	if err != nil || len(sockets) == 0 {
		return nil, err
	}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	var pids []int
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if holdsAny(pid, sockets) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// holdsAny reports whether one of pid's file descriptors is one of sockets
// ("socket:[inode]"). A process that has exited, or whose descriptors the
// launcher may not read, holds none.
func holdsAny(pid int, sockets map[string]bool) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err == nil && sockets[link] {
			return true
		}
	}
	return false
}

// listeningSockets returns the TCP sockets (IPv4 and IPv6) listening on port,
// as the targets of the file descriptors that hold them ("socket:[inode]").
func listeningSockets(port int) (map[string]bool, error) {
	sockets := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if os.IsNotExist(err) {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return nil, fmt.Errorf("controlplane: %w", err)
		}
		for _, inode := range listeningInodes(b, port) {
			sockets["socket:["+inode+"]"] = true
		}
	}
	return sockets, nil
}

// listeningInodes parses a /proc/net/tcp or /proc/net/tcp6 table and returns
// the inodes of the sockets in state LISTEN whose local port is port.
// Malformed lines are skipped.
func listeningInodes(table []byte, port int) []string {
	const stateListen = "0A"
	var inodes []string
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		// "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …"
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != stateListen {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil || int(p) != port {
			continue
		}
		inodes = append(inodes, fields[9])
	}
	return inodes
}
