// Package imagestore is the local node's image service, the part of a
// container runtime a kubelet asks to pull images: it resolves an image
// reference against a registry (or the registry's configured mirror, as
// containerd's registry mirrors), downloads the manifest, configuration and
// layers it does not hold yet into a cache of blobs by digest, and unpacks
// the layers, in order, into one read-only root filesystem per image.
//
// Unpacking follows the OCI image layer rules: whiteout files (.wh.<name>)
// delete what lower layers put there, an opaque marker (.wh..wh..opq) hides
// a directory's lower contents, and a later entry replaces an earlier one.
// A layer is untrusted input: an entry whose path is absolute or leaves the
// root, a symbolic link that is absolute or climbs out of the root, a hard
// link to anything outside it, and device files are refused, and every
// file is created through an os.Root, so not even a link planted by an
// earlier layer can make a write land outside the image's directory.
// Layers are streamed from disk, never held in memory.
//
// Layout under the store's directory:
//
//	blobs/sha256/<hex>   manifests, configurations and compressed layers
//	rootfs/<hex>/        an image's root filesystem, by manifest digest
//	refs.json            the digest each reference last resolved to
package imagestore
