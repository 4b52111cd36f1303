/**
 * The pKVM hypervisor's trace remote (arm64 hyp_trace, CONFIG_NVHE_EL2_TRACING),
 * simulated: its events as the hypervisor defines them (ids in section
 * order), its write_event hypercall that records the selftest event when it
 * can and drops it silently otherwise, and its trace_clock (the boot clock).
 */
import { selftestRemoteEvent, type RemoteEventDef, type TraceRemoteDef } from './remote_event.js';

/** enum hyp_enter_exit_reason, as the events print it. */
const REASONS = ['smc', 'hvc', 'sys', 'psci', 'host_abort', 'guest_exit', 'eret_host', 'eret_guest', 'unknown'];

function enterExit(name: string, id: number): RemoteEventDef {
  return {
    name,
    id,
    fields: [
      { type: 'u8', name: 'reason', size: 1, signed: false },
      { type: 'pid_t', name: 'vcpu', size: 4, signed: true },
    ],
    printFmt: '"reason=%s vcpu=%d", __hyp_enter_exit_reason_str(REC->reason), REC->vcpu',
    show: (e) => `reason=${REASONS[Math.min(Number(e.reason), REASONS.length - 1)]} vcpu=${e.vcpu}`,
  };
}

export const HYPERVISOR_REMOTE: TraceRemoteDef = {
  name: 'hypervisor',
  events: [enterExit('hyp_enter', 0), enterExit('hyp_exit', 1), selftestRemoteEvent(2)],
  selftest: 'selftest',
  writeEventRefuses: false,
  enableOnlySelftest: false,
  files: [{ name: 'trace_clock', perm: 0o440, text: '[boot]\n' }],
};
