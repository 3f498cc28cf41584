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
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// KAIRO_SCALE_PROFILE=<dir> makes the scale spec write CPU profiles of the
// brokers (from their --debug-listen address) and of the test process
// (the reconcilers) over a window, as <name>-broker-<i>.pprof and
// <name>-operator.pprof, for `go tool pprof`.
const scaleProfileEnv = "KAIRO_SCALE_PROFILE"

// profileScale profiles every broker and this process over window; the
// returned function waits until the profiles are written.
func profileScale(addrs []string, name string, window time.Duration) (wait func()) {
	dir := os.Getenv(scaleProfileEnv)
	if dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(window.Seconds()))
			resp, err := (&http.Client{Timeout: window + time.Minute}).Get(url)
			if err != nil {
				fmt.Fprintf(GinkgoWriter, "profile of broker %d: %v\n", i, err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-broker-%d.pprof", name, i)), body, 0o644)
			}
			if err != nil {
				fmt.Fprintf(GinkgoWriter, "profile of broker %d: %v\n", i, err)
			}
		})
	}
	f, err := os.Create(filepath.Join(dir, name+"-operator.pprof"))
	if err == nil && pprof.StartCPUProfile(f) == nil {
		wg.Go(func() {
			time.Sleep(window)
			pprof.StopCPUProfile()
			f.Close()
		})
	}
	return wg.Wait
}
