// Protocol names and limits of the mesh, in one place.
export const DM_PROTOCOL = '/agency/dm/1.0.0'
export const SYNC_PROTOCOL = '/agency/sync/2.0.0'

/** Largest direct-message text accepted, on both the sending and receiving side. */
export const MAX_DM_TEXT_BYTES = 64 * 1024
/** Largest frame on the DM stream (message plus envelope fields). */
export const MAX_DM_FRAME_BYTES = MAX_DM_TEXT_BYTES + 4096
/** Largest announcement text. */
export const MAX_ANNOUNCE_TEXT_BYTES = 16 * 1024
/** Largest gossip message (an entry is smaller; this bounds everything else). */
export const MAX_GOSSIP_BYTES = 256 * 1024

/**
 * The connections a node keeps before it closes some: gossipsub's upper mesh
 * degree (Dhi, 12) and room for newcomers that dial it while they learn of
 * others. The libp2p node refuses inbound connections at twice this.
 */
export const DEFAULT_MAX_CONNECTIONS = 16

export function swarmTopic(swarm: string): string {
  return `/agency/swarm/${swarm}/1`
}
