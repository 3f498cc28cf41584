/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controllers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// The scale measurement of docs/benchmarks.md ("Operator: topics at
// scale"). It runs only with KAIRO_SCALE_TEST=1, which also gives the
// reconcilers the production resync interval (30 s):
//
//	KAIRO_SCALE_TEST=1 go test ./controllers/ -v -timeout 30m -ginkgo.focus="at scale"
//
// KAIRO_SCALE_TOPICS (default 1000) and KAIRO_SCALE_IDLE (default 2m)
// change its size.

const scaleNamespace = "scale"

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// brokerProcess runs cmd/broker as its own process, as in a cluster, so the
// broker does not share the test process's CPU accounting or garbage
// collector with the reconcilers.
type brokerProcess struct {
	cmd  *exec.Cmd
	url  string
	host string
}

func startBrokerProcess() *brokerProcess {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	bin := filepath.Join(dir, "broker")
	build := exec.Command("go", "build", "-o", bin, "github.com/kairolog/kairolog/cmd/broker")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build cmd/broker: %s", out)

	host := freeAddr()
	logFile, err := os.Create(filepath.Join(dir, "broker.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "--id", "0", "--listen", host, "--advertised-address", host,
		"--raft-listen", freeAddr(), "--data-dir", filepath.Join(dir, "data"), "--log-level", "warn", "--raft-log-level", "off")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	Expect(cmd.Start()).To(Succeed())
	bp := &brokerProcess{cmd: cmd, url: "http://" + host, host: host}
	DeferCleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	})
	c, err := brokerclient.New(bp.url)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error { return c.Ready(context.Background()) }).
		WithTimeout(60 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return bp
}

// loadSnapshot is the counters at one moment.
type loadSnapshot struct {
	at           time.Time
	reconciles   float64
	brokerCalls  int64
	statusWrites int64
	otherWrites  int64
}

func snapshot(host string) loadSnapshot {
	return loadSnapshot{at: time.Now(), reconciles: reconcileCount("topic"), brokerCalls: brokerCalls.host(host),
		statusWrites: kubeWrites.status.Load(), otherWrites: kubeWrites.other.Load()}
}

func (s loadSnapshot) since(before loadSnapshot) loadSnapshot {
	return loadSnapshot{at: s.at, reconciles: s.reconciles - before.reconciles, brokerCalls: s.brokerCalls - before.brokerCalls,
		statusWrites: s.statusWrites - before.statusWrites, otherWrites: s.otherWrites - before.otherWrites}
}

// countReady counts the Topics of the namespace whose Ready is True for their generation.
func countReady() int {
	var list kairov1alpha1.TopicList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(scaleNamespace))).To(Succeed())
	n := 0
	for _, t := range list.Items {
		c := readyCondition(t.Status.Conditions)
		if c.Status == metav1.ConditionTrue && t.Status.ObservedGeneration == t.Generation {
			n++
		}
	}
	return n
}

// inParallel runs f for 0..n-1 on workers goroutines.
func inParallel(n, workers int, f func(i int) error) {
	GinkgoHelper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		Expect(err).NotTo(HaveOccurred())
	}
}

var _ = Describe("Topics at scale", Ordered, func() {
	var bp *brokerProcess
	n := envInt("KAIRO_SCALE_TOPICS", 1000)
	idle := envDuration("KAIRO_SCALE_IDLE", 2*time.Minute)

	BeforeAll(func() {
		if os.Getenv(scaleTestEnv) == "" {
			Skip("set " + scaleTestEnv + "=1 to create 1000 Topics against one broker process")
		}
		ensureNamespace(scaleNamespace)
		bp = startBrokerProcess()
		createCluster(scaleNamespace, "kairo", bp.url)
	})

	It(fmt.Sprintf("makes %d Topics Ready, then stays quiet while they idle", n), func() {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("load-%04d", i)
		}
		start := snapshot(bp.host)
		inParallel(n, 16, func(i int) error {
			t := newTopic(names[i], "kairo", func(t *kairov1alpha1.Topic) {
				t.Namespace = scaleNamespace
				t.Spec.Partitions = 3
				t.Spec.Config = map[string]string{"retention.ms": "86400000"}
			})
			return k8sClient.Create(ctx, t)
		})
		created := time.Since(start.at)

		var firstReady time.Duration
		Eventually(func() int {
			r := countReady()
			if r > 0 && firstReady == 0 {
				firstReady = time.Since(start.at)
			}
			return r
		}).WithTimeout(10 * time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(n))
		ready := snapshot(bp.host)
		create := ready.since(start)
		allReady := ready.at.Sub(start.at)

		logFigure("Scale: %d Topics (3 partitions each) against one broker process, resync %s", n, testResync)
		logFigure("Scale: created in the API server in %s; first Ready after %s; all Ready after %s",
			created.Round(time.Millisecond), firstReady.Round(time.Millisecond), allReady.Round(time.Millisecond))
		logFigure("Scale: mean latency during creation: broker calls %v, API server writes %v",
			brokerCalls.meanLatency(), kubeWrites.meanLatency())
		logFigure("Scale: during creation %.0f reconciles, %d broker calls, %d status writes, %d other writes (finalizers) — per Topic %.2f / %.2f / %.2f / %.2f",
			create.reconciles, create.brokerCalls, create.statusWrites, create.otherWrites,
			create.reconciles/float64(n), float64(create.brokerCalls)/float64(n),
			float64(create.statusWrites)/float64(n), float64(create.otherWrites)/float64(n))

		By(fmt.Sprintf("leaving the Topics idle for %s", idle))
		time.Sleep(idle)
		quiet := snapshot(bp.host).since(ready)
		intervals := idle.Seconds() / testResync.Seconds()
		logFigure("Scale: idle %s (%.1f resync intervals): %.0f reconciles, %d broker calls, %d status writes, %d other writes",
			idle, intervals, quiet.reconciles, quiet.brokerCalls, quiet.statusWrites, quiet.otherWrites)
		logFigure("Scale: idle per Topic: %.2f reconciles, %.2f broker calls (%.2f per resync interval), %.2f status writes",
			quiet.reconciles/float64(n), float64(quiet.brokerCalls)/float64(n),
			float64(quiet.brokerCalls)/float64(n)/intervals, float64(quiet.statusWrites)/float64(n))
		Expect(quiet.statusWrites).To(BeZero(), "idle Topics write no status")
		Expect(quiet.otherWrites).To(BeZero())
		Expect(float64(quiet.brokerCalls)).To(BeNumerically("<=", float64(n)*(intervals+1)),
			"at most one broker call per Topic per resync interval")

		By("deleting them all (deletionPolicy Delete)")
		del := snapshot(bp.host)
		inParallel(n, 16, func(i int) error {
			t := newTopic(names[i], "kairo", func(t *kairov1alpha1.Topic) { t.Namespace = scaleNamespace })
			return client.IgnoreNotFound(k8sClient.Delete(ctx, t))
		})
		Eventually(func() int {
			var list kairov1alpha1.TopicList
			Expect(k8sClient.List(ctx, &list, client.InNamespace(scaleNamespace))).To(Succeed())
			return len(list.Items)
		}).WithTimeout(10 * time.Minute).WithPolling(250 * time.Millisecond).Should(BeZero())
		gone := snapshot(bp.host).since(del)
		logFigure("Scale: all %d Topics deleted, with their topics on the broker, after %s (%d broker calls)",
			n, gone.at.Sub(del.at).Round(time.Millisecond), gone.brokerCalls)
		direct, err := brokerclient.New(bp.url)
		Expect(err).NotTo(HaveOccurred())
		left, err := direct.ListTopics(ctx, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(left, ",")).NotTo(ContainSubstring("load-"))

		By("timing the broker alone: the same creates straight from 16 clients")
		time.Sleep(10 * time.Second) // let the broker finish removing the deleted logs
		base := time.Now()
		inParallel(n, 16, func(i int) error {
			_, err := direct.CreateTopic(ctx, brokerclient.CreateTopicRequest{Name: fmt.Sprintf("base-%04d", i),
				Partitions: 3, Config: map[string]string{"retention.ms": "86400000"}})
			return err
		})
		logFigure("Scale: the broker alone creates the same %d topics from 16 clients in %s", n, time.Since(base).Round(time.Millisecond))
	})
})
