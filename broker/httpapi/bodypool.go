package httpapi

import "github.com/kairolog/kairolog/broker/buffers"

// Request bodies are read into buffers kept for the next request, by size
// class (buffers.Pool): a body grows through a buffer of each class up
// to its own size, and a batched produce is hundreds of kilobytes, so
// fresh buffers cost the broker that reads it zeroing and faulting in
// twice its body for every request.
//
// A buffer a body grew out of goes back at once: its bytes were copied to
// the next one and nothing points into it. The buffer a body ends in goes
// back only where its handler knows nothing points into it any more:
// the fast produce parser's strings, and so the records' keys, values and
// header keys, share it (produce releases it once every record was stored
// and its answer written; anything else leaves it to the collector).

// bodies are every server's body buffers.
var bodies buffers.Pool
