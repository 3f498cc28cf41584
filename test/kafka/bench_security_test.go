package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kairolog/kairolog/internal/pki"
)

// BenchmarkKafkaSecurity: the cost of TLS, SASL and ACLs on the Kafka
// listener. The same kgo produce and consume as BenchmarkKafka run against
// one broker per listener setup, one after the other in one run: plain;
// TLS; SASL_SSL with SCRAM-SHA-512 and authorization on; TLS with a client
// certificate and authorization on. The secure clients are a user with
// ACLs (not a superuser), so every request's ACL check is in the figure.
//
//	go test ./test/kafka/ -run '^$' -bench 'BenchmarkKafkaSecurity' -benchtime 200000x -count 1
//
// docs/benchmarks.md has the figures of this machine.
func BenchmarkKafkaSecurity(b *testing.B) {
	p := newSecurePKI(b)
	benchUser := map[string]any{"password": "bench-pw", "acls": []map[string]any{
		{"resource": "topic", "name": "bench-", "pattern": "prefix", "operations": []string{"All"}},
		{"resource": "cluster", "operations": []string{"Create"}},
	}}
	setups := []struct {
		name  string
		flags []string
		opts  func() []kgo.Opt
	}{
		{"plain", nil, func() []kgo.Opt { return nil }},
		{"tls", []string{"--kafka-tls"}, func() []kgo.Opt { return []kgo.Opt{kgo.DialTLSConfig(p.clientTLS())} }},
		{"sasl-ssl-scram-acls", append([]string{"--kafka-tls", "--kafka-authentication", "scram-sha-512"}, authorizationFlags...), func() []kgo.Opt {
			return []kgo.Opt{kgo.DialTLSConfig(p.clientTLS()), kgo.SASL(scram.Auth{User: "bench", Pass: "bench-pw"}.AsSha512Mechanism())}
		}},
		{"mtls-acls", append([]string{"--kafka-tls", "--kafka-authentication", "tls"}, authorizationFlags...), func() []kgo.Opt {
			return []kgo.Opt{kgo.DialTLSConfig(p.clientTLS(p.issue(b, "bench", pki.OrgUser)))}
		}},
	}
	for _, s := range setups {
		b.Run(s.name, func(b *testing.B) {
			c, operator := startSecureCluster(b, p, 1, func(int) []string { return s.flags })
			putUser(b, c, operator, "bench", benchUser)
			seeds, opts := c.KafkaAddresses(), s.opts()
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			topic := fmt.Sprintf("bench-%d", time.Now().UnixNano())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err = kadm.NewClient(cl).CreateTopic(ctx, benchPartitions, 1, nil, topic)
			cancel()
			cl.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.Run("produce", func(b *testing.B) { benchProduce(b, seeds, topic, opts...) })
			b.Run("consume", func(b *testing.B) { benchConsume(b, seeds, topic, opts...) })
		})
	}
}
