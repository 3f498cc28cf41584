package core_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/core"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// clientErrorTable is what a client is answered for each error the
// packages below the broker can return: the API's error table. Only a bug
// may answer 500, so no row does.
var clientErrorTable = []struct {
	name   string // package.Name, as declared
	err    error
	code   string
	status int
}{
	{"storage.ErrOffsetOutOfRange", storage.ErrOffsetOutOfRange, api.CodeOffsetOutOfRange, 416},
	{"storage.OffsetOutOfRangeError", &storage.OffsetOutOfRangeError{Offset: 9, LogStartOffset: 0, LogEndOffset: 4}, api.CodeOffsetOutOfRange, 416},
	{"storage.ErrCorrupt", storage.ErrCorrupt, api.CodeStorageError, 503},
	{"storage.ErrCorruptPartitionMetadata", storage.ErrCorruptPartitionMetadata, api.CodeStorageError, 503},
	{"storage.ErrLogFailed", storage.ErrLogFailed, api.CodeStorageError, 503},
	{"storage.ErrBatchTooLarge", storage.ErrBatchTooLarge, api.CodeRecordTooLarge, 413},
	{"storage.ErrEmptyBatch", storage.ErrEmptyBatch, api.CodeInvalidArgument, 400},
	{"storage.ErrNotContiguous", storage.ErrNotContiguous, api.CodeLeaderNotAvailable, 503},
	{"storage.ErrStaleEpoch", storage.ErrStaleEpoch, api.CodeLeaderNotAvailable, 503},
	{"storage.ErrClosed", storage.ErrClosed, api.CodeLeaderNotAvailable, 503},

	{"replica.ErrUnknownPartition", replica.ErrUnknownPartition, api.CodeUnknownPartition, 404},
	{"replica.ErrNotEnoughReplicas", replica.ErrNotEnoughReplicas, api.CodeNotEnoughReplicas, 503},
	{"replica.ErrTimeout", replica.ErrTimeout, api.CodeRequestTimedOut, 503},
	{"replica.ErrFencedLeaderEpoch", replica.ErrFencedLeaderEpoch, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrUnknownLeaderEpoch", replica.ErrUnknownLeaderEpoch, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrNotEnoughReplicasAfterAppend", replica.ErrNotEnoughReplicasAfterAppend, api.CodeNotEnoughReplicasAfterAppend, 503},
	{"replica.ErrLeaderMovedAfterAppend", replica.ErrLeaderMovedAfterAppend, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrNotReplica", replica.ErrNotReplica, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrInconsistentTopicID", replica.ErrInconsistentTopicID, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrMetadataNotCurrent", replica.ErrMetadataNotCurrent, api.CodeLeaderNotAvailable, 503},
	{"replica.ErrClosed", replica.ErrClosed, api.CodeNotReady, 503},
	{"replica.NotLeaderError", &replica.NotLeaderError{Topic: "t", Partition: 0, Leader: 2, Epoch: 5}, api.CodeLeaderNotAvailable, 503},
	{"replica.OffsetOutOfRangeError", &replica.OffsetOutOfRangeError{Offset: 9, LogStartOffset: 0, HighWatermark: 4}, api.CodeOffsetOutOfRange, 416},

	{"group.ErrInvalidArgument", group.ErrInvalidArgument, api.CodeInvalidArgument, 400},
	{"group.ErrUnknownGroup", group.ErrUnknownGroup, api.CodeUnknownGroup, 404},
	{"group.ErrUnknownMember", group.ErrUnknownMember, api.CodeUnknownMemberID, 404},
	{"group.ErrIllegalGeneration", group.ErrIllegalGeneration, api.CodeIllegalGeneration, 409},
	{"group.ErrRebalanceInProgress", group.ErrRebalanceInProgress, api.CodeRebalanceInProgress, 409},
	{"group.ErrNonEmptyGroup", group.ErrNonEmptyGroup, api.CodeNonEmptyGroup, 409},
	{"group.ErrGroupSubscribedToTopic", group.ErrGroupSubscribedToTopic, api.CodeGroupSubscribedToTopic, 409},
	{"group.ErrInconsistentGroupProtocol", group.ErrInconsistentGroupProtocol, api.CodeInconsistentGroupProtocol, 409},
	{"group.ErrNoActiveMembers", group.ErrNoActiveMembers, api.CodeNoActiveMembers, 400},
	{"group.ErrUnknownTopic", group.ErrUnknownTopic, api.CodeUnknownTopic, 404},
	{"group.ErrUnknownPartition", group.ErrUnknownPartition, api.CodeUnknownPartition, 404},
	{"group.ErrCoordinatorNotAvailable", group.ErrCoordinatorNotAvailable, api.CodeCoordinatorNotAvailable, 503},
	{"group.ErrInvalidRecord", group.ErrInvalidRecord, api.CodeCoordinatorNotAvailable, 503},

	{"memory.ErrExhausted", memory.ErrExhausted, api.CodeBrokerBusy, 503},
	{"memory.ErrNeverFits", memory.ErrNeverFits, api.CodeBodyTooLarge, 413},
	{"storage.ErrCorruptBatch", fmt.Errorf("%w: %w", storage.ErrCorruptBatch, storage.ErrCorrupt), api.CodeCorruptMessage, 400},
	{"storage.ErrInvalidRecord", storage.ErrInvalidRecord, api.CodeInvalidRecord, 400},
	{"storage.ErrInvalidProducer", storage.ErrInvalidProducer, api.CodeInvalidArgument, 400},
	{"storage.ErrOutOfOrderSequence", storage.ErrOutOfOrderSequence, api.CodeOutOfOrderSequence, 409},
	{"storage.ErrInvalidProducerEpoch", storage.ErrInvalidProducerEpoch, api.CodeInvalidProducerEpoch, 409},

	{"metadata.ErrStaleProducerIDs", metadata.ErrStaleProducerIDs, api.CodeNotController, 503},
	{"metadata.ErrUnknownTopic", metadata.ErrUnknownTopic, api.CodeUnknownTopic, 404},
	{"metadata.ErrTopicExists", metadata.ErrTopicExists, api.CodeTopicAlreadyExists, 409},
	{"metadata.ErrInvalidTopic", metadata.ErrInvalidTopic, api.CodeInvalidArgument, 400},
	{"metadata.ErrUnknownPartition", metadata.ErrUnknownPartition, api.CodeUnknownPartition, 404},
	{"metadata.ErrInvalidPartitions", metadata.ErrInvalidPartitions, api.CodeInvalidPartitions, 400},
	{"metadata.ErrStalePartitionCount", metadata.ErrStalePartitionCount, api.CodeInvalidPartitions, 400},
	{"metadata.ErrInvalidReplicationFactor", metadata.ErrInvalidReplicationFactor, api.CodeInvalidReplicationFactor, 400},
	{"metadata.ErrInvalidConfig", metadata.ErrInvalidConfig, api.CodeInvalidConfig, 400},
	{"metadata.ErrInternalTopic", metadata.ErrInternalTopic, api.CodeInternalTopic, 403},
	{"metadata.ErrInvalidAssignment", metadata.ErrInvalidAssignment, api.CodeInvalidArgument, 400},
	{"metadata.ErrReassignmentInfeasible", metadata.ErrReassignmentInfeasible, api.CodeReassignmentInfeasible, 409},
	{"metadata.ErrReassignmentInProgress", metadata.ErrReassignmentInProgress, api.CodeReassignmentInProgress, 409},
	{"metadata.ErrNoReassignmentInProgress", metadata.ErrNoReassignmentInProgress, api.CodeNoReassignmentInProgress, 409},
	{"metadata.ErrBrokerNotEmpty", metadata.ErrBrokerNotEmpty, api.CodeBrokerNotEmpty, 409},
	{"metadata.ErrVoterNotReplaceable", metadata.ErrVoterNotReplaceable, api.CodeVoterNotReplaceable, 409},
	{"metadata.ErrUnknownBroker", metadata.ErrUnknownBroker, api.CodeUnknownBroker, 404},
	{"metadata.ErrNotController", metadata.ErrNotController, api.CodeNotController, 503},
	{"metadata.ErrFencedLeaderEpoch", metadata.ErrFencedLeaderEpoch, api.CodeLeaderNotAvailable, 503},
	{"metadata.ErrStalePartitionEpoch", metadata.ErrStalePartitionEpoch, api.CodeLeaderNotAvailable, 503},
	{"metadata.ErrNotLeader", metadata.ErrNotLeader, api.CodeLeaderNotAvailable, 503},
	{"metadata.ErrInvalidISR", metadata.ErrInvalidISR, api.CodeLeaderNotAvailable, 503},
	{"metadata.ErrStaleBrokerEpoch", metadata.ErrStaleBrokerEpoch, api.CodeNotReady, 503},
	{"metadata.ErrInvalidCommand", metadata.ErrInvalidCommand, api.CodeInvalidArgument, 400},
	{"metadata.ErrInvalidUser", metadata.ErrInvalidUser, api.CodeInvalidArgument, 400},
	{"metadata.ErrNotReady", metadata.ErrNotReady, api.CodeNotReady, 503},
	{"metadata.ErrRequestTimedOut", metadata.ErrRequestTimedOut, api.CodeRequestTimedOut, 503},

	// What the standard library reports for a request that ran out of
	// time or a disk that failed.
	{"context.DeadlineExceeded", context.DeadlineExceeded, api.CodeRequestTimedOut, 503},
	{"context.Canceled", context.Canceled, api.CodeRequestTimedOut, 503},
	{"fs.PathError", &fs.PathError{Op: "write", Path: "orders-0/00000000000000000000.log", Err: syscall.ENOSPC}, api.CodeStorageError, 503},
}

// TestEveryCoreErrorHasAClientCode walks the error table: every error,
// wrapped as the packages wrap them, gets its code and status, retriable
// ones with a retry hint. The stale-epoch append a leader move causes was
// a 500 INTERNAL before it had a row.
func TestEveryCoreErrorHasAClientCode(t *testing.T) {
	for _, row := range clientErrorTable {
		t.Run(row.name, func(t *testing.T) {
			e, ok := core.AsAPIError(fmt.Errorf("produce orders-0: %w", row.err))
			if !ok {
				t.Fatalf("no code: the server would answer 500 INTERNAL")
			}
			if e.Code != row.code || e.Status != row.status {
				t.Fatalf("%d %s, want %d %s", e.Status, e.Code, row.status, row.code)
			}
			if e.Status == 503 && e.RetryAfterMs <= 0 {
				t.Fatalf("a retriable %s without retry_after_ms", e.Code)
			}
			if row.code != api.CodeOffsetOutOfRange && !strings.Contains(e.Message, row.err.Error()) {
				t.Fatalf("message %q lost the cause %q", e.Message, row.err)
			}
		})
	}
}

// TestErrorTableCoversEveryDeclaredError fails when a package below the
// broker declares an exported error that the table above (and so,
// through the test above, core.AsAPIError) does not cover.
func TestErrorTableCoversEveryDeclaredError(t *testing.T) {
	inTable := map[string]bool{}
	for _, row := range clientErrorTable {
		inTable[row.name] = true
	}
	var missing []string
	for _, dir := range []string{"storage", "replica", "group", "memory", "cluster/metadata", "cluster"} {
		for _, name := range declaredErrors(t, dir) {
			if !inTable[name] {
				missing = append(missing, name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("errors without a row in the client error table (and maybe without a code): %v", missing)
	}
}

// declaredErrors parses the non-test Go files of broker/dir and returns
// its exported errors: variables set from errors.New or fmt.Errorf, and
// types whose name ends in Error. An exported variable that only re-exports
// another package's error (cluster.ErrX = metadata.ErrX) is not a new one.
func declaredErrors(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for i, id := range s.Names {
						if id.IsExported() && i < len(s.Values) && newError(s.Values[i]) {
							out = append(out, f.Name.Name+"."+id.Name)
						}
					}
				case *ast.TypeSpec:
					if s.Name.IsExported() && strings.HasSuffix(s.Name.Name, "Error") {
						out = append(out, f.Name.Name+"."+s.Name.Name)
					}
				}
			}
		}
	}
	if len(out) == 0 && dir != "cluster" {
		t.Fatalf("found no errors in broker/%s: has the package moved?", dir)
	}
	return out
}

func newError(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

// TestUnknownErrorIsABug: an error nothing knows is left for the server
// to log and answer 500.
func TestUnknownErrorIsABug(t *testing.T) {
	if e, ok := core.AsAPIError(errors.New("a nil map somewhere")); ok {
		t.Fatalf("an unknown error got %v", e)
	}
}

// TestErrorTableIsDocumented checks docs/api.md's status table against the
// codes the API answers with.
func TestErrorTableIsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		var status int
		if _, err := fmt.Sscanf(line, "| %d |", &status); err != nil || status < 400 {
			continue
		}
		for _, part := range strings.Split(line, "`")[1:] {
			if code := strings.TrimSpace(part); code != "" && code == strings.ToUpper(code) && !strings.ContainsAny(code, " ,()") {
				documented[code] = status
			}
		}
	}
	for _, row := range clientErrorTable {
		if got, ok := documented[row.code]; !ok || got != row.status {
			t.Errorf("docs/api.md lists %s under %d, want %d", row.code, got, row.status)
		}
	}
}
