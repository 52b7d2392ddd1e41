package controlplane

import (
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListeningInodes(t *testing.T) {
	// Shaped like /proc/net/tcp: a header, sockets listening on 127.0.0.1:8080
	// (0x1F90) and 0.0.0.0:8080, a connection from local port 8080
	// (ESTABLISHED, 01), a listener on another port and malformed lines.
	table := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1004 1 0000000000000000 100 0 0 10 0
   4: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1005
   5: short line
`)
	assert.Equal(t, []string{"1001", "1002"}, listeningInodes(table, 8080))
	assert.Equal(t, []string{"1004"}, listeningInodes(table, 8081))
	assert.Empty(t, listeningInodes(table, 40960), "0xA000 is only a remote port")
	assert.Empty(t, listeningInodes(nil, 8080))
}

func TestBindFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string
		port int
		ok   bool
	}{
		{"kube-apiserver", `E1126 run.go:72] "command failed" err="failed to create listener: failed to listen on 127.0.0.1:41001: listen tcp 127.0.0.1:41001: bind: address already in use"`, 41001, true},
		{"etcd", `{"level":"fatal","msg":"discovery failed","error":"listen tcp 127.0.0.1:41002: bind: address already in use"}`, 41002, true},
		{"another port", `listen tcp 127.0.0.1:41003: bind: address already in use`, 0, false},
		{"a longer port", `listen tcp 127.0.0.1:410010: bind: address already in use`, 0, false},
		{"nothing", "I1126 serving securely on 127.0.0.1:41001", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, ok := bindFailure([]byte(tc.log), []int{41001, 41002})
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.port, port)
		})
	}
}

func TestListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port

	held, err := listens(os.Getpid(), port)
	require.NoError(t, err)
	assert.True(t, held, "the test's own listener")
	held, err = listens(os.Getppid(), port)
	require.NoError(t, err)
	assert.False(t, held, "another process")
	holders, err := portHolders(port)
	require.NoError(t, err)
	assert.Equal(t, []int{os.Getpid()}, holders)

	require.NoError(t, l.Close())
	held, err = listens(os.Getpid(), port)
	require.NoError(t, err)
	assert.False(t, held, "closed")
	holders, err = portHolders(port)
	require.NoError(t, err)
	assert.Empty(t, holders)
}
