package fault

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/kairolog/kairolog/internal/pki"
)

// certFiles writes a certificate of role org, its key and the CA bundle
// into dir and returns the --tls-* arguments naming them.
func certFiles(t *testing.T, ca *pki.Authority, dir, name, org string) []string {
	t.Helper()
	kp, err := ca.Issue(pki.LeafSpec{CommonName: name, Organization: org, Server: true, Client: true,
		DNSNames: []string{"localhost"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{name + ".crt": kp.CertPEM, name + ".key": kp.KeyPEM, "ca.crt": ca.CertPEM}
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--tls-cert-file", filepath.Join(dir, name+".crt"), "--tls-key-file", filepath.Join(dir, name+".key"),
		"--tls-ca-file", filepath.Join(dir, "ca.crt")}
}

// withFlags is args with the flags in extra replacing any earlier value.
func withFlags(args []string, extra ...string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(extra); i += 2 {
		replaced := false
		for j := 0; j+1 < len(out); j++ {
			if out[j] == extra[i] {
				out[j+1], replaced = extra[i+1], true
			}
		}
		if !replaced {
			out = append(out, extra[i], extra[i+1])
		}
	}
	return out
}

// TestPeerTLSRollingChange turns mutual TLS between three brokers on, one
// broker at a time (off → permissive → required), and off again the same
// way, with acks=all producers and a committing group running throughout.
// Then it checks that no acknowledged record was lost and that, with TLS
// required, the peer listener and the raft transport refuse a plain
// connection and a user's certificate of the same CA.
func TestPeerTLSRollingChange(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes for about a minute")
	}
	procs := newCluster(t, 3, "offsets.topic.num.partitions=3\n")
	ca, err := pki.NewAuthority("peer-tls-test", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	tlsArgs := make([][]string, len(procs))
	for i := range procs {
		tlsArgs[i] = certFiles(t, ca, certDir, fmt.Sprintf("broker-%d", i), pki.OrgBroker)
		procs[i].start(t)
	}
	for _, p := range procs {
		p.waitReady(t, time.Minute)
	}
	ctx := context.Background()
	createReplicatedTopic(t, procs, topic, 1)
	waitInSync(t, procs)
	w := newWorkload(procs, topic, group)
	w.start(3)
	stopped := false
	defer func() {
		if !stopped {
			w.stop()
		}
	}()

	// Plain, the checks below see the listeners answer (so they can fail).
	if st := plainPeerCall(procs[0].c.PeerAddress(0)); st != http.StatusUnauthorized {
		t.Fatalf("plain peer listener: a call without the secret answered %d, want 401", st)
	}
	if err := plainRaftCall(procs[0].c.RaftAddress(0)); err != nil {
		t.Fatalf("plain raft transport: %v", err)
	}

	roll := func(mode string) {
		for i, p := range procs {
			waitInSync(t, procs)
			p.stop(t)
			if mode == "off" {
				p.args = withFlags(p.args, "--peer-tls", "off")
			} else {
				p.args = withFlags(p.args, append(tlsArgs[i], "--peer-tls", mode)...)
			}
			before := w.ackedCount()
			p.start(t)
			p.waitReady(t, time.Minute)
			t.Logf("broker %d restarted with --peer-tls=%s (%d records acknowledged so far)", i, mode, before)
		}
		waitInSync(t, procs)
	}
	roll("permissive")
	roll("required")

	// With TLS required every way in between brokers is closed to a plain
	// connection and to a user's certificate of the cluster's CA.
	user := certFiles(t, ca, certDir, "alice", pki.OrgUser)
	userCert, err := tls.LoadX509KeyPair(user[1], user[3])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		peerAddr, raftAddr := p.c.PeerAddress(p.id), p.c.RaftAddress(p.id)
		if st := plainPeerCall(peerAddr); st == http.StatusUnauthorized || st == http.StatusOK {
			t.Errorf("broker %d: the peer listener answered a plain call with %d", p.id, st)
		}
		for _, addr := range []string{peerAddr, raftAddr} {
			if err := tlsHandshake(addr, userCert); err == nil {
				t.Errorf("broker %d: %s accepted a user's certificate", p.id, addr)
			}
		}
		if err := plainRaftCall(raftAddr); err == nil {
			t.Errorf("broker %d: the raft transport answered a plain RequestVote", p.id)
		}
	}

	roll("permissive")
	roll("off")
	time.Sleep(time.Second)
	w.stop()
	stopped = true

	waitInSync(t, procs)
	var hw int64
	eventually(t, 30*time.Second, "the high watermark to reach the log end", func() bool {
		d, err := anyClient(procs).DescribeTopic(ctx, topic)
		if err != nil {
			return false
		}
		hw = d.Partitions[0].HighWatermark
		return d.Partitions[0].HighWatermark == d.Partitions[0].LogEndOffset
	})
	for _, p := range procs {
		p.stop(t)
	}
	lost, duplicated := checkReplicas(t, procs, w, hw)
	t.Logf("acknowledged records: %d (plus %d failed or timed-out attempts); lost %d, duplicated %d",
		len(w.acked), w.errors, lost, duplicated)
	if len(w.acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}
	if lost > 0 || duplicated > 0 {
		t.Fatalf("%d acknowledged records lost, %d duplicated", lost, duplicated)
	}
}

// plainPeerCall sends a plain HTTP request without the cluster secret to
// a peer listener and returns the status (0: the connection was dropped).
// A plain listener answers 401; a TLS one never lets the request reach the
// handler.
func plainPeerCall(addr string) int {
	c := &http.Client{Timeout: 3 * time.Second}
	res, err := c.Post("http://"+addr+"/internal/controller/heartbeat", "application/json", strings.NewReader("{}"))
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

func tlsHandshake(addr string, cert tls.Certificate) error {
	d := &net.Dialer{Timeout: 3 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert},
		InsecureSkipVerify: true}) //nolint:gosec // the test checks what the server admits
	if err != nil {
		return err
	}
	defer c.Close()
	// TLS 1.3 reports a refused client certificate on the first read.
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return nil // still connected: admitted
	}
	if err == nil {
		return nil
	}
	return err
}

// plainRaftCall sends a RequestVote over raft's own plain TCP transport:
// nil when the broker answered it.
func plainRaftCall(addr string) error {
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 3*time.Second, io.Discard)
	if err != nil {
		return err
	}
	defer tr.Close()
	var resp raft.RequestVoteResponse
	return tr.RequestVote("99", raft.ServerAddress(addr), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("99"), Addr: []byte("127.0.0.1:1")}, Term: 0}, &resp)
}
