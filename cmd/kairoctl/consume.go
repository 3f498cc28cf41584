package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

func consumeCmd(g *globals) *cobra.Command {
	var (
		cons     consumer
		printKey bool
	)
	cmd := &cobra.Command{
		Use:   "consume TOPIC [TOPIC...] --group GROUP",
		Short: "Consume as a member of a consumer group, committing after each poll",
		Long: `Consume as a member of a consumer group: join, sync, heartbeat in the
background, fetch the assigned partitions, print each record and commit the
offsets after each poll. A rebalance makes the consumer join again; Ctrl-C
(or --max) leaves the group.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if cons.group == "" {
				return errors.New("--group is required")
			}
			cons.c, cons.topics, cons.out, cons.json, cons.printKey = c, args, cmd.OutOrStdout(), g.json(), printKey
			cons.log = cmd.ErrOrStderr()
			return cons.run(cmd.Context())
		},
	}
	cmd.Flags().StringVarP(&cons.group, "group", "g", "", "consumer group")
	cmd.Flags().BoolVar(&cons.fromBeginning, "from-beginning", false, "start partitions with no committed offset at the log start (default: at the end)")
	cmd.Flags().IntVar(&cons.max, "max", 0, "stop after this many records (0 = run until Ctrl-C)")
	cmd.Flags().Int64Var(&cons.sessionMs, "session-timeout-ms", 10000, "session timeout; heartbeats go every third of it")
	cmd.Flags().StringVar(&cons.keySep, "key-separator", "\t", "text between key and value with --print-key")
	cmd.Flags().BoolVar(&printKey, "print-key", false, "print each record's key before its value")
	return cmd
}

type partitionKey struct {
	topic     string
	partition int32
}

// consumer is one group member's loop.
type consumer struct {
	c             *client.Client
	group         string
	topics        []string
	fromBeginning bool
	max           int
	sessionMs     int64
	out, log      io.Writer
	json          bool
	printKey      bool
	keySep        string

	memberID   string
	generation int32
	assignment []partitionKey
	positions  map[partitionKey]int64
	consumed   int
}

// errRejoin ends a generation: the member must join again.
var errRejoin = errors.New("rejoin")

func (c *consumer) run(ctx context.Context) error {
	defer c.leave()
	for {
		err := c.join(ctx)
		if err == nil {
			err = c.consumeGeneration(ctx)
		}
		switch {
		case ctx.Err() != nil, c.done():
			return nil
		case errors.Is(err, errRejoin), api.IsCode(err, api.CodeRebalanceInProgress),
			api.IsCode(err, api.CodeIllegalGeneration):
			continue
		case api.IsCode(err, api.CodeUnknownMemberID):
			c.memberID = ""
			continue
		case retriable(err):
			// A leader or the group's coordinator is moving (a broker
			// stopped): join again once it has.
			fmt.Fprintf(c.log, "retrying: %v\n", err)
			if !sleepCtx(ctx, retryDelay(err)) {
				return nil
			}
			continue
		case err != nil:
			return err
		}
	}
}

func (c *consumer) done() bool { return c.max > 0 && c.consumed >= c.max }

func (c *consumer) join(ctx context.Context) error {
	j, err := c.c.JoinGroup(ctx, api.JoinGroupRequest{Group: c.group, MemberID: c.memberID, Topics: c.topics,
		SessionTimeoutMs: c.sessionMs, RebalanceTimeoutMs: 2 * c.sessionMs, ClientID: "kairoctl"})
	if err != nil {
		return err
	}
	c.memberID, c.generation = j.MemberID, j.Generation
	s, err := c.c.SyncGroup(ctx, c.group, c.memberID, c.generation)
	if err != nil {
		return err
	}
	c.assignment = c.assignment[:0]
	for _, tp := range s.Assignment {
		for _, p := range tp.Partitions {
			c.assignment = append(c.assignment, partitionKey{tp.Topic, p})
		}
	}
	fmt.Fprintf(c.log, "joined group %s as %s, generation %d, %d partitions\n", c.group, c.memberID, c.generation, len(c.assignment))
	return c.initPositions(ctx)
}

// initPositions starts each partition at its committed offset, or at the log
// start (--from-beginning) or the high watermark.
func (c *consumer) initPositions(ctx context.Context) error {
	c.positions = map[partitionKey]int64{}
	offs, err := c.c.GroupOffsets(ctx, c.group)
	if err != nil {
		return err
	}
	for _, o := range offs {
		c.positions[partitionKey{o.Topic, o.Partition}] = o.Offset
	}
	hws := map[partitionKey]int64{}
	for _, tp := range c.assignment {
		if _, ok := c.positions[tp]; ok {
			continue
		}
		if c.fromBeginning {
			c.positions[tp] = -1
			continue
		}
		if _, seen := hws[tp]; !seen {
			d, err := c.c.DescribeTopic(ctx, tp.topic)
			if err != nil {
				return err
			}
			for _, p := range d.Partitions {
				hws[partitionKey{tp.topic, p.Partition}] = p.HighWatermark
			}
		}
		c.positions[tp] = hws[tp]
	}
	return nil
}

// consumeGeneration polls the assigned partitions until a rebalance, an error,
// --max or Ctrl-C, heartbeating in the background.
func (c *consumer) consumeGeneration(ctx context.Context) error {
	hbCtx, stop := context.WithCancel(ctx)
	defer stop()
	rebalance := make(chan error, 1)
	go c.heartbeat(hbCtx, rebalance)
	for !c.done() {
		select {
		case err := <-rebalance:
			return err
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if len(c.assignment) == 0 {
			select {
			case err := <-rebalance:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := c.poll(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (c *consumer) heartbeat(ctx context.Context, rebalance chan<- error) {
	t := time.NewTicker(time.Duration(max(c.sessionMs/3, 100)) * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := c.c.Heartbeat(ctx, c.group, c.memberID, c.generation)
		if err == nil || ctx.Err() != nil {
			continue
		}
		var apiErr *api.Error
		if errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 {
			if apiErr.Code == api.CodeRebalanceInProgress {
				err = errRejoin
			}
			rebalance <- err
			return
		}
		fmt.Fprintf(c.log, "heartbeat failed: %v\n", err)
	}
}

type fetchResult struct {
	tp   partitionKey
	resp *client.FetchResponse
	err  error
}

// poll fetches every assigned partition at once (long-polling up to a
// second), prints the records in partition order and commits the new
// positions.
func (c *consumer) poll(ctx context.Context) error {
	results := make([]fetchResult, len(c.assignment))
	done := make(chan struct{}, len(c.assignment))
	for i, tp := range c.assignment {
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := c.c.Fetch(ctx, client.FetchRequest{Topic: tp.topic, Partition: tp.partition,
				Offset: c.positions[tp], WaitMs: 1000})
			results[i] = fetchResult{tp, resp, err}
		}()
	}
	for range c.assignment {
		<-done
	}
	var commits []api.OffsetCommit
	var retry error
	for _, r := range results {
		if r.err != nil {
			var apiErr *api.Error
			if errors.As(r.err, &apiErr) && apiErr.Code == api.CodeOffsetOutOfRange && apiErr.LogStartOffset != nil {
				c.positions[r.tp] = c.resetPosition(apiErr)
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if retriable(r.err) {
				// The partition's leader is moving: fetch it again
				// next round, after a pause.
				retry = r.err
				continue
			}
			return r.err
		}
		next := c.positions[r.tp]
		for _, rec := range r.resp.Records {
			if c.done() {
				break
			}
			c.print(r.tp, rec)
			c.consumed++
			next = rec.Offset + 1
		}
		if len(r.resp.Records) == 0 {
			next = r.resp.NextOffset
		}
		if next != c.positions[r.tp] || len(r.resp.Records) > 0 {
			c.positions[r.tp] = next
			commits = append(commits, api.OffsetCommit{Topic: r.tp.topic, Partition: r.tp.partition, Offset: next})
		}
	}
	if retry != nil {
		sleepCtx(ctx, retryDelay(retry))
	}
	if len(commits) == 0 {
		return nil
	}
	return c.c.CommitOffsets(ctx, api.CommitOffsetsRequest{Group: c.group, MemberID: c.memberID, Generation: c.generation, Offsets: commits})
}

// retriable reports a 503 answer or a broker that could not be reached:
// a leadership or coordinator move that a retry outlasts.
func retriable(err error) bool {
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		return apiErr.Retriable()
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED)
}

// retryDelay is the broker's retry_after_ms hint, or 200 ms.
func retryDelay(err error) time.Duration {
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.RetryAfterMs > 0 {
		return time.Duration(apiErr.RetryAfterMs) * time.Millisecond
	}
	return 200 * time.Millisecond
}

// sleepCtx sleeps for d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func (c *consumer) resetPosition(e *api.Error) int64 {
	if c.fromBeginning || e.HighWatermark == nil {
		return *e.LogStartOffset
	}
	return *e.HighWatermark
}

func (c *consumer) print(tp partitionKey, r client.FetchedRecord) {
	if c.json {
		b, _ := json.Marshal(struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			client.FetchedRecord
		}{tp.topic, tp.partition, r})
		fmt.Fprintln(c.out, string(b))
		return
	}
	if c.printKey {
		key := ""
		if r.Key != nil {
			key = *r.Key
		}
		fmt.Fprintf(c.out, "%s%s%s\n", key, c.keySep, r.Message)
		return
	}
	fmt.Fprintln(c.out, r.Message)
}

// leave tells the coordinator this member is gone, so the others rebalance at
// once instead of after the session timeout.
func (c *consumer) leave() {
	if c.memberID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.c.LeaveGroup(ctx, c.group, c.memberID); err == nil {
		fmt.Fprintf(c.log, "left group %s\n", c.group)
	}
}
