package api

import "encoding/json"

// RecordPosition is where one produced record was stored, or why it was not.
// Offset is -1 for a record that was not stored (the reply omits "offset").
// Code and Error are set for a record whose partition failed; a record
// with both an Offset and a Code is stored, with less replication than
// asked for (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
type RecordPosition struct {
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

// Stored reports whether the record is in the partition's log.
func (r RecordPosition) Stored() bool { return r.Offset >= 0 }

// recordPositionJSON is RecordPosition's wire shape, where a missing
// "offset" means the record was not stored.
type recordPositionJSON struct {
	Partition int32  `json:"partition"`
	Offset    *int64 `json:"offset,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
}

// MarshalJSON leaves "offset" out for a record that was not stored.
func (r RecordPosition) MarshalJSON() ([]byte, error) {
	w := recordPositionJSON{Partition: r.Partition, Error: r.Error, Code: r.Code}
	if r.Offset >= 0 {
		w.Offset = &r.Offset
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a missing "offset" as -1.
func (r *RecordPosition) UnmarshalJSON(b []byte) error {
	var w recordPositionJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = RecordPosition{Partition: w.Partition, Offset: -1, Error: w.Error, Code: w.Code}
	if w.Offset != nil {
		r.Offset = *w.Offset
	}
	return nil
}
