import { ExpirySweep } from '../transactions/expiry-sweep';

/**
 * The anchoring sweep: AnchorTimelinesHandler on a timer, in every process that holds the signing
 * key (the api role, whether or not it also runs the workers), and once when it starts (the
 * backfill). The same loop as the expiry sweep, under its own name.
 */
export class TimelineAnchorSweep extends ExpirySweep {}
