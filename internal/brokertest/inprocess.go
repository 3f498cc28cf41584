package brokertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/httpapi"
	"github.com/kairolog/kairolog/broker/kafka"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/internal/heldport"
)

// InProcessOptions configure brokers that run in the test's own process.
type InProcessOptions struct {
	// Brokers is how many brokers form the cluster, every one a voter.
	// Default 1.
	Brokers int
	// Settings of every broker. Default config.DefaultSettings() without
	// the initial rebalance delay (testProperties).
	Settings *config.Settings
}

// InProcessBroker is a broker running in the test's own process: the core,
// its client API, its Kafka listener and its peer listener, on loopback
// ports held from the moment they were picked (heldport).
type InProcessBroker struct {
	ID int32
	// Core is the broker itself, for a test that looks inside.
	Core *core.Broker
	// Address is the client API's "127.0.0.1:port"; URL is "http://" and it.
	Address, URL string
	// KafkaAddress is the Kafka listener's "127.0.0.1:port", for Kafka's
	// own clients.
	KafkaAddress string
	DataDir      string

	srv, peerSrv *http.Server
	kafka        *kafka.Server
	cancel       context.CancelFunc
	runDone      chan struct{}
	stopOnce     sync.Once
}

// StartInProcess starts opts.Brokers brokers forming one cluster, waits up
// to a minute until every one is ready, and stops them when the test ends.
func StartInProcess(t heldport.TB, opts InProcessOptions) []*InProcessBroker {
	t.Helper()
	n := max(opts.Brokers, 1)
	settings := config.DefaultSettings()
	settings.GroupInitialRebalanceDelay = 0 // as testProperties
	if opts.Settings != nil {
		settings = *opts.Settings
	}
	var voters []cluster.Voter
	addrs := make([][4]string, n) // client API, peer, raft, Kafka
	for i := range n {
		addrs[i] = [4]string{heldport.Reserve(t), heldport.Reserve(t), heldport.Reserve(t), heldport.Reserve(t)}
		if n > 1 {
			voters = append(voters, cluster.Voter{ID: i, Address: addrs[i][2]})
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	secret := peer.GenerateSecret()
	out := make([]*InProcessBroker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		b := &InProcessBroker{ID: int32(i), runDone: make(chan struct{})}
		out[i] = b
		wg.Add(1)
		go func() { // voters must start together to elect a leader
			defer wg.Done()
			errs[i] = b.start(settings, addrs[i], voters, secret, quiet)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, b := range out {
			b.Stop()
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, b := range out {
		for err := b.Client().Ready(context.Background()); err != nil; err = b.Client().Ready(context.Background()) {
			if time.Now().After(deadline) {
				t.Fatal(fmt.Sprintf("in-process broker %d not ready after a minute: %v", b.ID, err))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return out
}

func (b *InProcessBroker) start(s config.Settings, addrs [4]string, voters []cluster.Voter, secret peer.Secret, log *slog.Logger) error {
	ln, err := heldport.Listen(addrs[0])
	if err != nil {
		return err
	}
	peerLn, err := heldport.Listen(addrs[1])
	if err != nil {
		ln.Close()
		return err
	}
	kafkaLn, err := heldport.Listen(addrs[3])
	if err != nil {
		ln.Close()
		peerLn.Close()
		return err
	}
	raftLn, err := heldport.Listen(addrs[2])
	if err == nil {
		b.DataDir, err = os.MkdirTemp("", "kairolog-inprocess-broker-")
	}
	if err == nil {
		b.Address, b.KafkaAddress = ln.Addr().String(), kafkaLn.Addr().String()
		b.URL = "http://" + b.Address
		b.Core, err = core.New(config.Config{ID: b.ID, DataDir: b.DataDir, HTTPAdvertise: b.Address, KafkaAdvertise: b.KafkaAddress,
			PeerAdvertise: peerLn.Addr().String(), PeerSecret: secret, RaftListener: raftLn, InitialVoters: voters,
			Settings: s, Logger: log, RaftLogOutput: io.Discard, RaftLogLevel: "off"})
	}
	if err != nil {
		ln.Close()
		peerLn.Close()
		kafkaLn.Close()
		if raftLn != nil {
			raftLn.Close() // closing it twice, after core.New did, is harmless
		}
		if b.DataDir != "" {
			os.RemoveAll(b.DataDir)
		}
		return fmt.Errorf("brokertest: in-process broker %d: %w", b.ID, err)
	}
	public := httpapi.New(b.Core, httpapi.Options{Logger: log, MaxBodyBytes: s.MaxRequestBytes})
	b.srv = &http.Server{Handler: public, ReadHeaderTimeout: 10 * time.Second}
	b.peerSrv = &http.Server{Handler: b.Core.PeerHandler(), ReadHeaderTimeout: 10 * time.Second}
	b.kafka = kafka.New(kafka.Options{Logger: log, Core: b.Core, Mode: kafka.Direct, Advertised: b.KafkaAddress,
		RequestContext: core.Local, NodeID: b.ID, ClusterID: b.Core.ClusterID})
	go func() { _ = b.srv.Serve(ln) }()
	go func() { _ = b.peerSrv.Serve(peerLn) }()
	go func() { _ = b.kafka.Serve(kafkaLn) }()
	var ctx context.Context
	ctx, b.cancel = context.WithCancel(context.Background())
	go func() { _ = b.Core.Run(ctx); close(b.runDone) }()
	return nil
}

// Client is a broker API client for b.
func (b *InProcessBroker) Client() *client.Client {
	c, err := client.New(b.URL, client.WithTimeout(10*time.Second))
	if err != nil {
		panic(err)
	}
	return c
}

// Stop moves b's leaderships away, stops its listeners and the broker, and
// removes its data directory. A second Stop does nothing.
func (b *InProcessBroker) Stop() {
	b.stopOnce.Do(func() {
		if b.cancel == nil {
			return // never started
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Core.ControlledShutdown(ctx)
		_ = b.srv.Close()
		_ = b.peerSrv.Close()
		_ = b.kafka.Close()
		b.cancel()
		_ = b.Core.Close()
		<-b.runDone
		_ = os.RemoveAll(b.DataDir)
	})
}
