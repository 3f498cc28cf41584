package peer

// Peer streams: one long-lived connection per pair of brokers carrying
// their calls as frames (the package documentation's Streams). The frames
// are in streamframe.go, the calling side in streamclient.go, the serving
// side in streamserver.go, the bodies' encodings in encoding.go.
