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
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// The scale measurement of docs/benchmarks.md ("Operator: topics at
// scale"): Topics with three replicas each against three broker
// processes. It runs only with KAIRO_SCALE_TEST=1, which also gives the
// reconcilers the production resync interval (30 s):
//
//	KAIRO_SCALE_TEST=1 go test ./controllers/ -v -timeout 30m -ginkgo.focus="at scale"
//
// KAIRO_SCALE_TOPICS (default 1000) and KAIRO_SCALE_IDLE (default 2m)
// change its size, KAIRO_SCALE_BROKERS (default 3) the number of brokers
// (the replication factor is min(brokers, 3)).

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

// scaleBrokers are broker processes (cmd/broker), as in a cluster, so the
// brokers do not share the test process's CPU accounting or garbage
// collector with the reconcilers. The reconcilers reach them through one
// endpoint that balances over the ready brokers, as the client Service
// does.
type scaleBrokers struct {
	*brokertest.Cluster
	n    int
	url  string
	host string
	// debug are the brokers' --debug-listen addresses (KAIRO_SCALE_PROFILE).
	debug []string
}

// startScaleBrokers starts n broker processes forming one cluster (the
// first three voters of the metadata quorum) and waits until all are ready.
func startScaleBrokers(n int) *scaleBrokers {
	GinkgoHelper()
	profiling := os.Getenv(scaleProfileEnv) != ""
	c, err := brokertest.NewCluster(brokertest.Options{Brokers: n, Dir: GinkgoT().TempDir(), LogLevel: "warn",
		Debug: profiling, Args: func(int) []string { return []string{"--raft-log-level", "off"} }})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = c.Close() })
	Expect(c.StartAll()).To(Succeed())
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	Expect(c.WaitReady(wctx)).To(Succeed())
	url := c.ServiceURL()
	bs := &scaleBrokers{Cluster: c, n: n, url: url, host: strings.TrimPrefix(url, "http://")}
	if profiling {
		for i := range n {
			bs.debug = append(bs.debug, c.DebugAddress(i))
		}
	}
	return bs
}

// loadSnapshot is the counters at one moment.
type loadSnapshot struct {
	at           time.Time
	reconciles   float64
	brokerCalls  int64
	statusWrites int64
	otherWrites  int64
	// cpu is the CPU time used so far by the test process (the reconcilers,
	// their caches and the spec's own client), the broker, the API server
	// and etcd. Wall-clock times on a shared machine vary with its load;
	// CPU time much less.
	cpu map[string]time.Duration
}

func snapshot(host string, pids map[string][]int) loadSnapshot {
	s := loadSnapshot{at: time.Now(), reconciles: reconcileCount("topic"), brokerCalls: int64(brokerCalls.count(0, toHost(host))),
		statusWrites: int64(managerCalls.count(0, statusWrites("topics"))),
		otherWrites:  int64(managerCalls.count(0, otherWrites("topics"))), cpu: map[string]time.Duration{}}
	for name, ps := range pids {
		for _, pid := range ps {
			s.cpu[name] += processCPU(pid)
		}
	}
	return s
}

func (s loadSnapshot) since(before loadSnapshot) loadSnapshot {
	out := loadSnapshot{at: s.at, reconciles: s.reconciles - before.reconciles, brokerCalls: s.brokerCalls - before.brokerCalls,
		statusWrites: s.statusWrites - before.statusWrites, otherWrites: s.otherWrites - before.otherWrites,
		cpu: map[string]time.Duration{}}
	for k, v := range s.cpu {
		out.cpu[k] = v - before.cpu[k]
	}
	return out
}

func (s loadSnapshot) cpuString() string {
	var parts []string
	for _, k := range []string{"operator+spec", "brokers", "kube-apiserver", "etcd"} {
		if d, ok := s.cpu[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1fs", k, d.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// brokersCPU is the CPU time of every broker process together.
func (s loadSnapshot) brokersCPU() time.Duration { return s.cpu["brokers"] }

// processCPU is the user and system CPU time of a process, from
// /proc/<pid>/stat (in clock ticks of 10 ms).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// findProcess returns the pid of the process whose command line contains
// every one of parts, or 0.
func findProcess(parts ...string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		found := true
		for _, p := range parts {
			found = found && strings.Contains(cmdline, p)
		}
		if found {
			return pid
		}
	}
	return 0
}

// measuredProcesses are the processes whose CPU time the scale spec
// reports; "brokers" adds up every broker process.
func measuredProcesses(bs *scaleBrokers) map[string][]int {
	pids := map[string][]int{"operator+spec": {os.Getpid()}}
	for i := range bs.n {
		pids["brokers"] = append(pids["brokers"], bs.PID(i))
	}
	cp := testEnv.ControlPlane
	if cp.APIServer != nil {
		if pid := findProcess("kube-apiserver", "--secure-port="+cp.APIServer.Port); pid != 0 {
			pids["kube-apiserver"] = []int{pid}
		}
	}
	if cp.Etcd != nil && cp.Etcd.URL != nil {
		if pid := findProcess("etcd", cp.Etcd.URL.Host); pid != 0 {
			pids["etcd"] = []int{pid}
		}
	}
	return pids
}

// countReady counts the Topics of the namespace whose Ready is True for their generation.
func countReady() int {
	var list kairov1alpha1.TopicList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(scaleNamespace))).To(Succeed())
	n := 0
	for _, t := range list.Items {
		c := condition(t.Status.Conditions, kairov1alpha1.ConditionReady)
		if c.Status == metav1.ConditionTrue && t.Status.ObservedGeneration == t.Generation {
			n++
		}
	}
	return n
}

// topicEventCounts counts the events about Topics of a namespace by reason.
func topicEventCounts(namespace string) map[string]int {
	var list eventsv1.EventList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Kind == "Topic" {
			out[e.Reason]++
		}
	}
	return out
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
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
	var bp *scaleBrokers
	n := envInt("KAIRO_SCALE_TOPICS", 1000)
	idle := envDuration("KAIRO_SCALE_IDLE", 2*time.Minute)
	brokers := envInt("KAIRO_SCALE_BROKERS", 3)
	rf := int32(min(brokers, 3))

	BeforeAll(func() {
		if os.Getenv(scaleTestEnv) == "" {
			Skip("set " + scaleTestEnv + "=1 to create 1000 Topics against three broker processes")
		}
		ensureNamespace(scaleNamespace)
		bp = startScaleBrokers(brokers)
		createCluster(scaleNamespace, "kairo", bp.url)
	})

	It(fmt.Sprintf("makes %d Topics Ready, then stays quiet while they idle", n), func() {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("load-%04d", i)
		}
		pids := measuredProcesses(bp)
		loadBefore := loadAverage()
		start := snapshot(bp.host, pids)
		profiled := profileScale(bp.debug, "create", 30*time.Second)
		inParallel(n, 16, func(i int) error {
			t := newTopic(names[i], "kairo", func(t *kairov1alpha1.Topic) {
				t.Namespace = scaleNamespace
				t.Spec.Partitions = 3
				t.Spec.Replicas = &rf
				t.Spec.Config = map[string]string{"retention.ms": "86400000"}
			})
			return k8sClient.Create(ctx, t)
		})
		created := time.Since(start.at)

		// Waiting must not load the API server: listing 1000 Topics every
		// quarter second costs it more CPU than the reconcilers' writes. The
		// status writes are counted in this process, so wait for n of them,
		// then check with one list that every Topic is Ready.
		Eventually(func() int64 {
			return int64(managerCalls.count(0, statusWrites("topics"))) - start.statusWrites
		}).WithTimeout(10 * time.Minute).WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", n))
		allReady := time.Since(start.at)
		ready := snapshot(bp.host, pids)
		if countReady() != n { // some status writes were failures: wait for the rest
			Eventually(countReady).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Equal(n))
			allReady = time.Since(start.at)
			ready = snapshot(bp.host, pids)
		}
		create := ready.since(start)
		profiled()
		atReady := topicStatuses()

		logFigure("Scale: %d Topics (3 partitions, %d replicas each) against %d broker processes, resync %s", n, rf, brokers, testResync)
		logFigure("Scale: created in the API server in %s; all Ready after %s",
			created.Round(time.Millisecond), allReady.Round(time.Millisecond))
		logFigure("Scale: mean latency during creation: broker calls %v, API server writes %v",
			brokerCalls.meanLatency(toHost(bp.host)), managerCalls.meanLatency(all(isWrite, isObjectOf("topics"))))
		logFigure("Scale: CPU time during creation: %s (load average before: %s)", create.cpuString(), loadBefore)
		logFigure("Scale: during creation %.0f reconciles, %d broker calls, %d status writes, %d other writes (finalizers) — per Topic %.2f / %.2f / %.2f / %.2f",
			create.reconciles, create.brokerCalls, create.statusWrites, create.otherWrites,
			create.reconciles/float64(n), float64(create.brokerCalls)/float64(n),
			float64(create.statusWrites)/float64(n), float64(create.otherWrites)/float64(n))

		logFigure("Scale: when all were Ready: %s", statusHealth(atReady))

		By(fmt.Sprintf("leaving the Topics idle for %s", idle))
		time.Sleep(idle)
		quiet := snapshot(bp.host, pids).since(ready)
		afterIdle := topicStatuses()
		logFigure("Scale: after the idle window: %s; %s", statusHealth(afterIdle), statusChanges(atReady, afterIdle))
		// The window is the time since all were Ready: the idle sleep, and
		// the end of a profile when one is taken.
		window := quiet.at.Sub(ready.at).Round(time.Second)
		intervals := window.Seconds() / testResync.Seconds()
		logFigure("Scale: idle %s (%.1f resync intervals): %.0f reconciles, %d broker calls, %d status writes, %d other writes",
			window, intervals, quiet.reconciles, quiet.brokerCalls, quiet.statusWrites, quiet.otherWrites)
		logFigure("Scale: CPU time while idle: %s", quiet.cpuString())
		logFigure("Scale: idle per Topic: %.2f reconciles, %.2f broker calls (%.2f per resync interval), %.2f status writes",
			quiet.reconciles/float64(n), float64(quiet.brokerCalls)/float64(n),
			float64(quiet.brokerCalls)/float64(n)/intervals, float64(quiet.statusWrites)/float64(n))
		Expect(quiet.statusWrites).To(BeZero(), "idle Topics write no status")
		Expect(quiet.otherWrites).To(BeZero())
		Expect(float64(quiet.brokerCalls)).To(BeNumerically("<=", float64(n)*(intervals+1)),
			"at most one broker call per Topic per resync interval")
		events := topicEventCounts(scaleNamespace)
		logFigure("Scale: events recorded for the Topics by then: %v", events)
		Expect(events).To(Equal(map[string]int{ReasonTopicCreated: n}), "one event per Topic, none while idle")

		By("deleting them all (deletionPolicy Delete)")
		del := snapshot(bp.host, pids)
		inParallel(n, 16, func(i int) error {
			t := newTopic(names[i], "kairo", func(t *kairov1alpha1.Topic) { t.Namespace = scaleNamespace })
			return client.IgnoreNotFound(k8sClient.Delete(ctx, t))
		})
		Eventually(func() int {
			var list metav1.PartialObjectMetadataList
			list.SetGroupVersionKind(kairov1alpha1.GroupVersion.WithKind("TopicList"))
			Expect(k8sClient.List(ctx, &list, client.InNamespace(scaleNamespace))).To(Succeed())
			return len(list.Items)
		}).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(BeZero())
		gone := snapshot(bp.host, pids).since(del)
		logFigure("Scale: all %d Topics deleted, with their topics on the broker, after %s (%d broker calls; CPU %s)",
			n, gone.at.Sub(del.at).Round(time.Millisecond), gone.brokerCalls, gone.cpuString())
		direct := bp.ServiceClient()
		left, err := direct.ListTopics(ctx, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(left, ",")).NotTo(ContainSubstring("load-"))

		By("timing the broker alone: the same creates straight from 16 clients")
		time.Sleep(10 * time.Second) // let the broker finish removing the deleted logs
		base := snapshot(bp.host, pids)
		inParallel(n, 16, func(i int) error {
			_, err := direct.CreateTopic(ctx, api.CreateTopicRequest{Name: fmt.Sprintf("base-%04d", i),
				Partitions: 3, ReplicationFactor: int16(rf), Config: map[string]string{"retention.ms": "86400000"}})
			return err
		})
		alone := snapshot(bp.host, pids).since(base)
		logFigure("Scale: the brokers alone create the same %d topics from 16 clients in %s (brokers' CPU %.1fs)",
			n, alone.at.Sub(base.at).Round(time.Millisecond), alone.brokersCPU().Seconds())
	})
})
