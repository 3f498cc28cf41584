package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kairolog/kairolog/internal/pki"
)

// The users of the Kafka security tests, stored through the HTTP API: root
// is a superuser; writer may write and read topic sec-a and use groups
// starting with "writers-"; carol has a certificate and may only read
// sec-a.
var securityUsers = map[string]map[string]any{
	"root": {"password": "root-pw"},
	"writer": {"password": "writer-pw", "acls": []map[string]any{
		{"resource": "topic", "name": "sec-a", "operations": []string{"Write", "Read"}},
		{"resource": "group", "name": "writers-", "pattern": "prefix", "operations": []string{"Read"}},
	}},
	"carol": {"acls": []map[string]any{
		{"resource": "topic", "name": "sec-a", "operations": []string{"Read"}},
		{"resource": "group", "name": "*", "operations": []string{"Read"}},
	}},
}

// TestKafkaSecurity runs Kafka's own client, kgo, against three broker
// processes whose Kafka listeners take SASL over TLS (SCRAM-SHA-512 and
// PLAIN) and check every request against the users' ACLs, directly and
// through the gateway of two brokers (SASL on one, client certificates on
// the other): a wrong password and an unknown user are
// SASL_AUTHENTICATION_FAILED; the superuser creates topics, produces,
// consumes in a group and lists everything; a user allowed to write topic
// A is refused topic B with TOPIC_AUTHORIZATION_FAILED and does not see
// it, is refused a group outside its prefix with GROUP_AUTHORIZATION_FAILED,
// topic creation and altering topic A's configs; a certificate's common
// name is its principal, and a client without one is disconnected; over a
// gateway without TLS, SCRAM works and PLAIN is not offered.
func TestKafkaSecurity(t *testing.T) {
	p := newSecurePKI(t)
	c, operator := startSecureCluster(t, p, 3, func(i int) []string {
		// Gateways: SASL_PLAINTEXT on broker 0, SASL_SSL on broker 1,
		// client certificates on broker 2.
		gateway := []string{"--kafka-gateway-authentication", "scram-sha-512"}
		switch i {
		case 1:
			gateway = append(gateway, "--kafka-gateway-tls")
		case 2:
			gateway = []string{"--kafka-gateway-authentication", "tls", "--kafka-gateway-tls"}
		}
		return append(append([]string{"--kafka-tls", "--kafka-authentication", "scram-sha-512"}, gateway...), authorizationFlags...)
	})
	for name, u := range securityUsers {
		putUser(t, c, operator, name, u)
	}
	kafkaSeeds := c.KafkaAddresses()

	t.Run("bad credentials", func(t *testing.T) {
		for _, login := range []struct{ user, password string }{{"writer", "wrong"}, {"mallory", "writer-pw"}} {
			cl := scramClient(t, p, kafkaSeeds, login.user, login.password)
			err := cl.Ping(testContext(t, 20*time.Second))
			if !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("%s/%s: %v, want SASL_AUTHENTICATION_FAILED", login.user, login.password, err)
			}
		}
	})

	t.Run("superuser", func(t *testing.T) {
		ctx := testContext(t, 60*time.Second)
		adm := kadm.NewClient(scramClient(t, p, kafkaSeeds, "root", "root-pw"))
		for _, topic := range []string{"sec-a", "sec-b", "sec-doomed"} {
			if _, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil {
				t.Fatalf("root creates %s: %v", topic, err)
			}
		}
		cl := scramClient(t, p, kafkaSeeds, "root", "root-pw", kgo.ConsumerGroup("root-group"),
			kgo.ConsumeTopics("sec-b"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		produceRecords(t, ctx, cl, "sec-b", 10)
		consumeRecords(t, ctx, cl, 10)
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Fatalf("root commits: %v", err)
		}
		groups, err := adm.ListGroups(ctx)
		if err != nil || !slices.Contains(groups.Groups(), "root-group") {
			t.Fatalf("root lists groups %v %v", groups.Groups(), err)
		}
		if _, err := adm.DeleteTopic(ctx, "sec-doomed"); err != nil {
			t.Fatalf("root deletes a topic: %v", err)
		}
	})

	t.Run("describe ACLs", func(t *testing.T) { describeACLs(t, p, kafkaSeeds) })

	for name, seeds := range map[string][]string{"kafka listener": kafkaSeeds, "gateway": {c.GatewayAddress(1)}} {
		t.Run("writer through the "+name, func(t *testing.T) {
			ctx := testContext(t, 60*time.Second)
			cl := scramClient(t, p, seeds, "writer", "writer-pw", kgo.ConsumerGroup("writers-"+strconv.Itoa(len(name))),
				kgo.ConsumeTopics("sec-a"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			produceRecords(t, ctx, cl, "sec-a", 5)
			consumeRecords(t, ctx, cl, 5)
			if err := cl.CommitUncommittedOffsets(ctx); err != nil {
				t.Fatalf("writer commits in its group: %v", err)
			}
			err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sec-b", Value: []byte("x")}).FirstErr()
			if !errors.Is(err, kerr.TopicAuthorizationFailed) {
				t.Errorf("writer produces to sec-b: %v, want TOPIC_AUTHORIZATION_FAILED", err)
			}
			adm := kadm.NewClient(cl)
			topics, err := adm.ListTopics(ctx)
			if err != nil || !topics.Has("sec-a") || topics.Has("sec-b") {
				t.Errorf("writer's metadata lists %v (%v), want sec-a and not sec-b", topics.Names(), err)
			}
			if _, err := adm.FetchOffsets(ctx, "others"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
				t.Errorf("writer reads group others' offsets: %v, want GROUP_AUTHORIZATION_FAILED", err)
			}
			groups, err := adm.ListGroups(ctx)
			if err != nil || slices.Contains(groups.Groups(), "root-group") {
				t.Errorf("writer lists groups %v (%v): root-group must not be among them", groups.Groups(), err)
			}
			res, err := adm.CreateTopic(ctx, 1, 1, nil, "sec-writer")
			if !errors.Is(err, kerr.TopicAuthorizationFailed) && !errors.Is(res.Err, kerr.TopicAuthorizationFailed) {
				t.Errorf("writer creates a topic: %v %v, want TOPIC_AUTHORIZATION_FAILED", err, res.Err)
			}
			// Writing a topic is not altering its configs, whichever
			// request a client sends for it.
			state, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadmString("1")}}, "sec-a")
			if err != nil || len(state) != 1 || !errors.Is(state[0].Err, kerr.TopicAuthorizationFailed) {
				t.Errorf("writer replaces sec-a's configs: %v %+v, want TOPIC_AUTHORIZATION_FAILED", err, state)
			}
			altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadmString("1")}}, "sec-a")
			if err != nil || len(altered) != 1 || !errors.Is(altered[0].Err, kerr.TopicAuthorizationFailed) {
				t.Errorf("writer alters sec-a's configs: %v %+v, want TOPIC_AUTHORIZATION_FAILED", err, altered)
			}
		})
	}

	t.Run("a group consumer refused its group", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		cl := scramClient(t, p, kafkaSeeds, "writer", "writer-pw", kgo.ConsumerGroup("others"), kgo.ConsumeTopics("sec-a"))
		var err error
		for err == nil && ctx.Err() == nil {
			cl.PollFetches(ctx).EachError(func(_ string, _ int32, e error) { err = e })
		}
		if !errors.Is(err, kerr.GroupAuthorizationFailed) {
			t.Errorf("writer consumes as group others: %v, want GROUP_AUTHORIZATION_FAILED", err)
		}
	})

	t.Run("PLAIN over TLS", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		produceRecords(t, ctx, plainClient(t, p, kafkaSeeds, "writer", "writer-pw"), "sec-a", 1)
		err := plainClient(t, p, kafkaSeeds, "writer", "wrong").Ping(testContext(t, 20*time.Second))
		if !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("PLAIN with a wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
		}
	})

	t.Run("SASL_PLAINTEXT", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		gw := []string{c.GatewayAddress(0)}
		scramPlaintext := newClient(t, gw, kgo.SASL(scram.Auth{User: "writer", Pass: "writer-pw"}.AsSha512Mechanism()))
		produceRecords(t, ctx, scramPlaintext, "sec-a", 1)
		// PLAIN would send the password in the clear: not offered.
		plainPlaintext := newClient(t, gw, kgo.SASL(plain.Auth{User: "writer", Pass: "writer-pw"}.AsMechanism()))
		if err := plainPlaintext.Ping(testContext(t, 20*time.Second)); !errors.Is(err, kerr.UnsupportedSaslMechanism) {
			t.Errorf("PLAIN without TLS: %v, want UNSUPPORTED_SASL_MECHANISM", err)
		}
	})

	t.Run("client certificate through the gateway", func(t *testing.T) {
		ctx := testContext(t, 30*time.Second)
		gw := []string{c.GatewayAddress(2)}
		carol := newClient(t, gw, kgo.DialTLSConfig(p.clientTLS(p.issue(t, "carol", pki.OrgUser))),
			kgo.ConsumeTopics("sec-a"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		consumeRecords(t, ctx, carol, 5)
		// An idempotent producer needs Write on some topic for its id, as
		// in Kafka; without idempotence the produce itself is refused.
		err := carol.ProduceSync(ctx, &kgo.Record{Topic: "sec-a", Value: []byte("x")}).FirstErr()
		if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
			t.Errorf("carol's idempotent producer: %v, want CLUSTER_AUTHORIZATION_FAILED", err)
		}
		plainProducer := newClient(t, gw, kgo.DialTLSConfig(p.clientTLS(p.issue(t, "carol", pki.OrgUser))), kgo.DisableIdempotentWrite())
		err = plainProducer.ProduceSync(ctx, &kgo.Record{Topic: "sec-a", Value: []byte("x")}).FirstErr()
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("carol produces to sec-a: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
		// A certificate of no known role, and none at all, name nobody:
		// the connection is refused after the handshake.
		for _, certs := range [][]tls.Certificate{{p.issue(t, "stranger", "elsewhere")}, nil} {
			anon := newClient(t, gw, kgo.DialTLSConfig(p.clientTLS(certs...)), kgo.RetryTimeout(2*time.Second))
			if err := anon.Ping(testContext(t, 10*time.Second)); err == nil {
				t.Errorf("a client with certificates %d was served", len(certs))
			}
		}
	})
}

// TestKcatSASL: kcat (librdkafka) with security.protocol=SASL_SSL and
// sasl.mechanisms=SCRAM-SHA-512 produces and consumes (plainly and as a
// group member) a topic its user may use, through the Kafka listener and
// through a gateway, and is refused a topic it may not write; with
// security.protocol=SSL and a user certificate it reads through a gateway
// that authenticates by certificate.
func TestKcatSASL(t *testing.T) {
	p := newSecurePKI(t)
	c, operator := startSecureCluster(t, p, 3, func(i int) []string {
		gateway := "scram-sha-512"
		if i == 2 {
			gateway = "tls"
		}
		return append([]string{"--kafka-tls", "--kafka-authentication", "scram-sha-512",
			"--kafka-gateway-tls", "--kafka-gateway-authentication", gateway}, authorizationFlags...)
	})
	for name, u := range securityUsers {
		putUser(t, c, operator, name, u)
	}
	ctx := testContext(t, 60*time.Second)
	if _, err := kadm.NewClient(scramClient(t, p, c.KafkaAddresses(), "root", "root-pw")).CreateTopic(ctx, 3, 3, nil, "sec-a"); err != nil {
		t.Fatal(err)
	}
	sasl := []string{"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=writer", "-X", "sasl.password=writer-pw", "-X", "ssl.ca.location=" + p.caFile}
	total := 0
	for name, bootstrap := range map[string]string{"kafka": c.KafkaAddress(0), "gateway": c.GatewayAddress(1)} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t, 60*time.Second)
			var lines []string
			for i := 0; i < 20; i++ {
				lines = append(lines, fmt.Sprintf("%s-%d", name, i))
			}
			kcat(t, ctx, strings.Join(lines, "\n")+"\n", append([]string{"-b", bootstrap, "-P", "-t", "sec-a", "-X", "acks=all"}, sasl...)...)
			total += len(lines)
			out := kcat(t, ctx, "", append([]string{"-b", bootstrap, "-C", "-t", "sec-a", "-o", "beginning", "-e", "-q", "-f", "%s\n"}, sasl...)...)
			if got := strings.Fields(out); len(got) != total {
				t.Fatalf("kcat consumed %d records, %d were produced:\n%s", len(got), total, out)
			}
			out = kcat(t, ctx, "", append([]string{"-b", bootstrap, "-G", "writers-kcat-" + name, "-o", "beginning", "-e", "-q", "-f", "%s\n"},
				append(sasl, "sec-a")...)...)
			if got := strings.Fields(out); len(got) != total {
				t.Fatalf("kcat -G consumed %d records, %d were produced:\n%s", len(got), total, out)
			}
			refused := exec.CommandContext(ctx, "kcat", append([]string{"-b", bootstrap, "-P", "-t", "sec-b"}, sasl...)...)
			refused.Stdin = strings.NewReader("x\n")
			if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(strings.ToLower(string(out)), "authorization failed") {
				t.Fatalf("kcat produced to sec-b: %v\n%s", err, out)
			}
		})
	}
	t.Run("certificate", func(t *testing.T) {
		ctx := testContext(t, 60*time.Second)
		p.issue(t, "carol", pki.OrgUser)
		out := kcat(t, ctx, "", "-b", c.GatewayAddress(2), "-C", "-t", "sec-a", "-o", "beginning", "-e", "-q", "-f", "%s\n",
			"-X", "security.protocol=SSL", "-X", "ssl.ca.location="+p.caFile,
			"-X", "ssl.certificate.location="+filepath.Join(p.dir, "carol.crt"), "-X", "ssl.key.location="+filepath.Join(p.dir, "carol.key"))
		if got := strings.Fields(out); len(got) != total {
			t.Fatalf("kcat with carol's certificate consumed %d records, %d were produced:\n%s", len(got), total, out)
		}
	})
}

// produceRecords produces n records to topic and fails the test on any error.
func produceRecords(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// consumeRecords polls until it has at least n records.
func consumeRecords(t *testing.T, ctx context.Context, cl *kgo.Client, n int) {
	t.Helper()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records of %d: %v", got, n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		got += fs.NumRecords()
	}
}
