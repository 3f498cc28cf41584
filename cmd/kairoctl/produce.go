package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/spf13/cobra"
)

func produceCmd(g *globals) *cobra.Command {
	var (
		keySep     string
		partition  int32
		acks       string
		batch      int
		headers    []string
		idempotent bool
	)
	cmd := &cobra.Command{
		Use:   "produce TOPIC [RECORD...]",
		Short: "Produce records given as arguments, or one per line of standard input",
		Long: `Produce records given as arguments, or one per line of standard input.
With --key-separator, the text before the first separator is the record key.
Without --partition, keyed records go where Kafka's default partitioner would
put them and keyless records round-robin.

By default kairoctl produces as an idempotent producer: it asks the broker
for a producer id (POST /producers), numbers each partition's records, and
sends a request that timed out or was refused with a retriable error again
with the same numbers, for up to two minutes, so that no record is stored
twice. --idempotent=false sends each request once, as plain produces.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			hdrs, err := parseConfigs(headers)
			if err != nil {
				return fmt.Errorf("--header: %w", err)
			}
			p := &producer{c: c, topic: args[0], keySep: keySep, acks: acks, headers: hdrs, batch: max(batch, 1), out: cmd.OutOrStdout(), json: g.json()}
			if cmd.Flags().Changed("partition") {
				p.partition = &partition
			}
			if idempotent {
				ip, err := c.NewIdempotentProducer(cmd.Context(), p.topic, client.ProducerOptions{Acks: acks})
				if err != nil {
					return err
				}
				p.idempotent = ip
			}
			if len(args) > 1 {
				for _, line := range args[1:] {
					p.add(line)
				}
				return p.flush(cmd)
			}
			return p.stream(cmd, cmd.InOrStdin())
		},
	}
	cmd.Flags().StringVar(&keySep, "key-separator", "", "split each record into key and value at the first occurrence of this text")
	cmd.Flags().Int32Var(&partition, "partition", 0, "partition to write to (default: by key, or round robin)")
	cmd.Flags().StringVar(&acks, "acks", "1", "1 (leader) or all (every in-sync replica)")
	cmd.Flags().IntVar(&batch, "batch", 1, "records per produce request when reading standard input")
	cmd.Flags().StringArrayVarP(&headers, "header", "H", nil, "record header key=value (repeatable)")
	cmd.Flags().BoolVar(&idempotent, "idempotent", true, "produce as an idempotent producer, retrying failed requests without storing a record twice")
	return cmd
}

type producer struct {
	c         *client.Client
	topic     string
	keySep    string
	acks      string
	headers   map[string]string
	partition *int32
	batch     int
	out       io.Writer
	json      bool
	pending   []client.ProduceRecord
	// idempotent, when set, sends the records (docs/api.md, Idempotent
	// produce).
	idempotent *client.Producer
}

func (p *producer) add(line string) {
	rec := client.ProduceRecord{Value: line, Partition: p.partition}
	if p.keySep != "" {
		if k, v, ok := strings.Cut(line, p.keySep); ok {
			rec.Key, rec.Value = &k, v
		}
	}
	if len(p.headers) > 0 {
		rec.Headers = p.headers
	}
	p.pending = append(p.pending, rec)
}

func (p *producer) stream(cmd *cobra.Command, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		p.add(sc.Text())
		if len(p.pending) >= p.batch {
			if err := p.flush(cmd); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return p.flush(cmd)
}

// flush sends the pending records: one record as a single-record request (the
// original API), more as one batch.
func (p *producer) flush(cmd *cobra.Command) error {
	if len(p.pending) == 0 {
		return nil
	}
	if p.idempotent != nil {
		return p.flushIdempotent(cmd)
	}
	req := client.ProduceRequest{Topic: p.topic, Acks: p.acks}
	if len(p.pending) == 1 {
		r := p.pending[0]
		req.Partition, req.Key, req.Message, req.Headers = r.Partition, r.Key, r.Value, r.Headers
	} else {
		req.Records = p.pending
	}
	resp, err := p.c.Produce(cmd.Context(), req)
	if err != nil && resp.Offset == nil && resp.Records == nil {
		return err
	}
	// On a failure that says where the records are, print that first:
	// which records are stored (and must not be sent again) and which not.
	p.pending = p.pending[:0]
	if p.json {
		if perr := printJSON(p.out, resp); perr != nil {
			return perr
		}
		return err
	}
	if resp.Offset != nil {
		fmt.Fprintf(p.out, "%s partition %d offset %d\n", p.topic, *resp.Partition, *resp.Offset)
	}
	p.printPositions(resp.Records)
	return err
}

// flushIdempotent sends the pending records with the idempotent producer,
// which retries until each is stored once or a request fails for good.
func (p *producer) flushIdempotent(cmd *cobra.Command) error {
	positions, err := p.idempotent.Send(cmd.Context(), p.pending)
	p.pending = p.pending[:0]
	if p.json {
		if perr := printJSON(p.out, client.ProduceResponse{Topic: p.topic, Records: positions}); perr != nil {
			return perr
		}
		return err
	}
	p.printPositions(positions)
	return err
}

func (p *producer) printPositions(positions []api.RecordPosition) {
	for _, r := range positions {
		switch {
		case !r.Stored() && r.Code == "":
			fmt.Fprintf(p.out, "%s not sent: an earlier partition failed\n", p.topic)
		case !r.Stored():
			fmt.Fprintf(p.out, "%s partition %d not stored: %s: %s\n", p.topic, r.Partition, r.Code, r.Error)
		case r.Code != "":
			fmt.Fprintf(p.out, "%s partition %d offset %d (%s)\n", p.topic, r.Partition, r.Offset, r.Code)
		default:
			fmt.Fprintf(p.out, "%s partition %d offset %d\n", p.topic, r.Partition, r.Offset)
		}
	}
}
