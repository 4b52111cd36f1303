# Every offset (0..95) of a sample of functions, and a return probe at +4:
# run after the table (collect.mjs --extra tools/probe-defs/offset-scan.sh),
# extracted by offsets.mjs. The sample: functions traceable on both series.
for F in mutex_lock seq_read_iter _raw_spin_lock mutex_unlock kmem_cache_alloc_noprof ksys_read page_ext_put d_tmpfile netdev_lower_state_changed xsk_net_exit pcie_aspm_init_link_state pci_pri_supported anon_vma_interval_tree_remove task_set_jobctl_pending pmic_read_temp setup_net qi_flush_context devlink_param_cmode_is_supported schedule_on_each_cpu balance_dl line_show branch_show bpf_cgrp_storage_free rtnl_net_dumpid supply_map_show sk_msg_recvmsg _perf_event_enable hsw_limit_period pt_event_snapshot_aux do_smart_wakeup_zero cppc_get_highest_perf domain_qi_batch_alloc tpm_common_read sugov_update_single_freq follow_pfnmap_start fs_param_is_uid serial8250_tx_chars any_show addrconf_mod_dad_work destroy_context_ldt early_serial8250_write input_register_handle x2apic_prepare_cpu hook_path_rename rcu_watching_snap_save bpf_prog_test_run_xdp fuse_file_flock __schedule vfs_write do_exit trace_event_raw_event_sched_switch native_sched_clock; do
  echo > error_log
  if echo "r:kr $F+4" > kprobe_events 2>/dev/null; then echo "@@RET $F ok"; else echo "@@RET $F $(grep 'error:' error_log | tail -n 1 | sed 's/.*error: //')"; fi
  i=0
  while [ $i -lt 96 ]; do
    echo > error_log
    if echo "p:kp $F+$i" > kprobe_events 2>/dev/null; then echo "@@OFF $F $i ok"
    else echo "@@OFF $F $i $(grep 'error:' error_log | tail -n 1 | sed 's/.*error: //')"; fi
    i=$((i+1))
  done
done
echo > kprobe_events
echo "@@SCANDONE"
