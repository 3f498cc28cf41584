// Package storage is the broker's partition log: an append-only sequence
// of record batches kept in segment files with sparse indexes, recovered
// after crashes, trimmed by retention and truncated by replication.
// Partition, replication and fetch code build on the API below; the data
// path reads top to bottom, Log → segment → file.
//
// # API
//
//	type Header struct { Key string; Value []byte }
//	type Record struct {
//	    Offset    int64  // absolute; set by Append, filled on read
//	    Timestamp int64  // Unix milliseconds; 0 on Append means "now"
//	    Key       []byte // nil = no key (nil and empty are distinct)
//	    Value     []byte // nil = null value (tombstone)
//	    Headers   []Header
//	}
//	type Config struct { SegmentBytes, SegmentMs, IndexIntervalBytes,
//	    RetentionMs, RetentionBytes, FlushMessages, FlushMs, MaxBatchBytes,
//	    ProducerIDExpiration, MaxProducers }
//	type BatchOptions struct { Compression Compression; Producer *Producer }
//	type Producer struct { ID int64; Epoch int16; BaseSequence int32 }
//	type AppendResult struct { BaseOffset, LastOffset int64; Duplicate bool }
//	type RecordSet struct { Records []Record; Section []byte; Count int; Options BatchOptions }
//	type Compression int8 // CompressionNone, …Gzip, …Snappy, …LZ4, …Zstd
//	func ParseCompression(name string) (Compression, bool)
//	func DefaultConfig() Config
//	func Open(dir string, cfg Config) (*Log, error)
//	func Create(dir, topicID string, cfg Config) (*Log, error) // a new partition, two fsyncs
//	func SyncDir(dir string) error // the parent of the directories Create made
//	func (l *Log) Append(records []Record, leaderEpoch int32) (base, last int64, err error)
//	func (l *Log) AppendRecords(records []Record, leaderEpoch int32, opts BatchOptions) (AppendResult, error)
//	func (l *Log) AppendBatch(batch []byte, leaderEpoch int32) (AppendResult, error)
//	func (l *Log) AppendMany(sets []RecordSet, leaderEpoch int32) ([]AppendResult, []error) // group commit
//	func (l *Log) Producers() []ProducerInfo
//	func (l *Log) AppendRaw(batches []byte) (last int64, err error)
//	func (l *Log) Read(offset, maxOffset int64, maxBytes, maxRecords int) ([]Record, error)
//	func (l *Log) ReadRaw(offset, maxOffset int64, maxBytes int) ([]byte, error)
//	func (l *Log) ReadRawWith(offset, maxOffset int64, maxBytes int, alloc func(n int) []byte) ([]byte, error)
//	func (l *Log) OffsetForTimestamp(ts int64) (int64, error)
//	func (l *Log) LogStartOffset() int64
//	func (l *Log) LogEndOffset() int64
//	func (l *Log) Size() int64
//	func (l *Log) Truncate(offset int64) error
//	func (l *Log) TruncateFullyAndStartAt(offset int64) error
//	func (l *Log) ApplyRetention(now time.Time, highWatermark int64) (deletedSegments int, err error)
//	func (l *Log) DeleteRecordsBefore(offset int64) error
//	func (l *Log) SetConfig(cfg Config)
//	func (l *Log) Flush() error
//	func (l *Log) Flushes() int64 // fsyncs made by flush.messages / flush.ms
//	func (l *Log) Close() error
//	func (l *Log) Err() error
//	func (l *Log) Delete() error
//	func (l *Log) LatestEpoch() int32
//	func (l *Log) AssignEpoch(epoch int32) error
//	func (l *Log) EndOffsetForEpoch(epoch int32) (foundEpoch int32, endOffset int64)
//	func EncodeBatch(dst []byte, baseOffset int64, leaderEpoch int32, records []Record) ([]byte, error)
//	func DecodeBatch(b []byte) (BatchHeader, []Record, error)
//	func ReadTopicID(dir string) (string, error)
//	func WriteTopicID(dir, id string) error
//	func VerifyBatch(b []byte) (BatchHeader, error)
//	func ParseBatchHeader(b []byte) (BatchHeader, error)
//
// Also: (*Log).Dir, Config and SegmentCount; BatchHeader with Size,
// LastOffset and NextOffset; BatchHeaderSize, Magic and
// DefaultMaxBatchBytes; NoProducerID, NoProducerEpoch and NoSequence.
//
// Errors: *OffsetOutOfRangeError (errors.Is ErrOffsetOutOfRange; carries
// LogStartOffset and LogEndOffset), ErrCorrupt, ErrBatchTooLarge,
// ErrEmptyBatch, ErrNotContiguous, ErrStaleEpoch, ErrClosed, ErrLogFailed,
// ErrCorruptPartitionMetadata; for producers' batches ErrInvalidRecord,
// ErrInvalidProducer, ErrOutOfOrderSequence, ErrInvalidProducerEpoch.
//
// Semantics worth knowing: Read's maxBytes counts encoded record sizes and
// ReadRaw's counts whole batches, and both always return the first
// available record or batch; ReadRaw returns only batches that end below
// maxOffset (a high watermark never splits one, as followers copy whole
// batches) and may include records below the log start offset in the
// batch holding it; Truncate cuts at a batch boundary at or below its
// offset; Append and AppendRaw refuse a leader epoch older than the latest
// one in the log (ErrStaleEpoch); EndOffsetForEpoch follows Kafka's
// LeaderEpochFileCache.endOffsetFor exactly, including (epoch, start of the
// oldest known epoch) for an epoch older than every known one.
//
// # Files
//
// A partition directory holds segments named by the base offset of their
// first batch, zero-padded to 20 digits: 00000000000000000000.log (the
// batches), .index and .timeindex. Beside them: log-format (see Format
// conversion), recovery-point-offset-checkpoint,
// log-start-offset-checkpoint and leader-epoch-checkpoint
// (text, Kafka's layout: a "0" version line, a count line, one entry per
// line) and .clean-shutdown, present only between Close and the next Open.
// <offset>.snapshot files hold the producer state as of that offset (see
// Idempotent producers).
// partition.metadata ("version: 0", "topic_id: <id>", Kafka's KIP-516
// file) names the topic the directory belongs to; Open ignores it, and
// ReadTopicID and WriteTopicID read and write it for the replica layer.
// Create writes it first, fsynced, when it makes a new directory, with
// the first segment only, and makes the directory durable with one fsync
// of it; the caller fsyncs the parent (SyncDir) once for many new
// directories (create.go).
//
// # Batch format
//
// A batch is Kafka's RecordBatch v2, byte for byte, so that a Kafka fetch
// can send stored batches as they are and a Kafka produce can be stored
// after setting only baseOffset and partitionLeaderEpoch, both outside
// the CRC. All integers are big-endian. A batch is a 61-byte header
// followed by its records:
//
//	offset  size  field
//	0       8     baseOffset           int64  offset of the first record
//	8       4     batchLength          int32  bytes after this field (total size − 12)
//	12      4     partitionLeaderEpoch int32  epoch of the leader that wrote it; −1 none
//	16      1     magic                int8   2
//	17      4     crc                  uint32 CRC-32C (Castagnoli) of bytes [21, end)
//	21      2     attributes           int16  bits 0–2 compression (0 none, 1 gzip,
//	                                          2 snappy, 3 lz4, 4 zstd), bit 3
//	                                          timestamp type (1 = LogAppendTime)
//	23      4     lastOffsetDelta      int32  last record's offset − baseOffset
//	27      8     baseTimestamp        int64  first record's timestamp (Unix ms)
//	35      8     maxTimestamp         int64  largest record timestamp
//	43      8     producerId           int64  −1 without a producer
//	51      2     producerEpoch        int16  −1 without a producer
//	53      4     baseSequence         int32  −1 without a producer
//	57      4     recordCount          int32  ≥ 1
//	61      …     records
//
// Each record is, with every varint a zig-zag varint (Go's
// binary.AppendVarint, Kafka's varint/varlong):
//
//	length          varint  bytes of the record after this field
//	attributes      int8    0
//	timestampDelta  varint  timestamp − baseTimestamp
//	offsetDelta     varint  offset − baseOffset; strictly increasing
//	keyLength       varint  −1 for a nil key
//	key             bytes
//	valueLength     varint  −1 for a nil value
//	value           bytes
//	headerCount     varint
//	headers         headerCount × (keyLength varint, key, valueLength varint
//	                (−1 nil), value)
//
// Append writes offsetDelta i for record i, so lastOffsetDelta is
// recordCount−1. In a LogAppendTime batch every record's timestamp is
// maxTimestamp, as in Kafka.
//
// # Compression
//
// In a compressed batch the records section is one stream of the codec
// the attributes name (compress.go): gzip and zstd (klauspost/compress),
// snappy as a raw block or in the xerial framing of Java producers
// (klauspost/compress), lz4 frames (pierrec/lz4). Batches are stored
// compressed, as written, and followers copy them so; Read decompresses.
// Every decompression is bounded: the records of a batch a producer
// writes may not exceed max.message.bytes uncompressed (ErrBatchTooLarge),
// and those of stored batches (reads, recovery, a follower's appends) the
// larger of that and 64 MiB; malformed compressed data is ErrCorrupt.
//
// # Format conversion
//
// Directories written before batches were Kafka's v2 hold a 46-byte header
// without magic, producerId, producerEpoch and baseSequence. Open converts
// such a directory once, crash-safely, before it loads it (convert.go);
// log-format ("2") marks a converted or new directory. The conversion
// needs free space for one copy of the partition's log.
//
// # Idempotent producers
//
// A batch stamped with a producer (producerId ≥ 0) belongs to Kafka's
// idempotent producer: the partition remembers, per producer, its epoch
// and its last five batches' sequence ranges with their offsets (Kafka's
// ProducerStateManager, producer.go). A producer's append that repeats
// one of them writes nothing and answers with the original offsets
// (AppendResult.Duplicate); one that does not continue the sequence is
// ErrOutOfOrderSequence, and one of an older epoch than the partition has
// seen ErrInvalidProducerEpoch. A producer the partition does not know
// may start at any sequence, as in Kafka since 2.5. Followers build the
// same state from the batches they copy, so a new leader deduplicates as
// the old one did. A producer idle for producer.id.expiration.ms (1 day)
// is forgotten, and past MaxProducers (100 000) the longest idle ones are.
//
// Every roll writes a snapshot of the state as of the new segment's base
// offset, and Close one at the log end (producer_snapshot.go); Open
// deletes the snapshots past the log end, loads the latest remaining one
// and replays the batch headers after it, so that a crash between a
// snapshot and the data before it, or a torn tail, never leaves state
// about batches the log does not hold. Truncate deletes the snapshots
// past the cut before it cuts and rebuilds the state the same way.
//
// AppendBatch stores a batch a producer encoded (the Kafka listener's
// path) after checking it as Kafka's LogValidator does, setting only its
// base offset and partition leader epoch.
//
// # Indexes
//
// .index holds 8-byte entries (offset − base as uint32, byte position as
// uint32) for the first batch of the segment and then one batch per
// index.interval.bytes; a lookup is a binary search followed by a short
// forward scan. .timeindex holds 12-byte entries (timestamp int64,
// offset − base uint32): every record below that offset has a timestamp ≤
// that timestamp. A sealed or cleanly closed segment's time index ends
// with (largest timestamp, next offset). The active segment's indexes live
// on the heap and are written when it is rolled, flushed or closed; sealed
// segments' indexes are read through read-only memory mappings.
//
// # Concurrency
//
// One writer and any number of readers; see Log. A reader never sees a
// batch before it is wholly written.
//
// # Durability and recovery
//
// With the default policy appends reach the OS page cache and fsync is
// left to segment rolls, Flush and Close (and to replication, as in Kafka);
// flush.messages and flush.ms add fsyncs of the active segment. A roll
// writes the finished segment's index files and fsyncs its log in the
// background, then moves the recovery point to the new segment's base; the
// checkpoint file follows at most every 10 s, and on Flush and Close,
// which also fsync index files.
// Open after a crash re-reads every segment from the one holding the
// checkpointed recovery point onwards, verifying CRCs and record
// structure, cuts the log at the first bad batch and drops later
// segments; see Open. Reads check the CRC of every batch they return from,
// so a corrupt record is never handed out.
//
// A failed fsync fails the log for good (Err, ErrLogFailed): every write is
// refused, the recovery point stays where the last successful fsync left
// it and Close writes no clean-shutdown marker, so the next Open checks
// the log from there. A later fsync that succeeds proves nothing: Linux
// reports a writeback error once and may drop the pages (PostgreSQL's
// "fsyncgate").
package storage
