import { describe, expect, it } from 'vitest';
import { parseStacks, partsAdded, serverPart } from '../../bench/temporal-profile';

const BIN = '/opt/temporal/bin/temporal';

describe('the Temporal dev server profile (bench --profile)', () => {
  it('reads perf script stacks, leaf first, one per blank-line-separated sample', () => {
    const text = [
      '',
      '\t          283dc2 [unknown] (/opt/temporal/bin/temporal)',
      '\t          95fc1 [unknown] (/opt/temporal/bin/temporal)',
      '',
      '\tffffffff821f5127 exc_page_fault ([kernel.kallsyms])',
      '\t         21825cb [unknown] (/opt/temporal/bin/temporal)',
      '',
    ].join('\n');
    const stacks = parseStacks(text);
    expect(stacks).toHaveLength(2);
    expect(stacks[0]).toEqual([
      { ip: 0x283dc2n, sym: '[unknown]', dso: BIN },
      { ip: 0x95fc1n, sym: '[unknown]', dso: BIN },
    ]);
    expect(stacks[1]![0]).toEqual({ ip: 0xffffffff821f5127n, sym: 'exc_page_fault', dso: '[kernel.kallsyms]' });
  });

  it('puts a sample in the first part its stack shows: a visibility write before the RPC or queue around it', () => {
    const upsert = [
      'modernc.org/sqlite/lib._sqlite3VdbeExec',
      'go.temporal.io/server/common/persistence/visibility/store/sql.(*VisibilityStore).UpsertWorkflowExecution',
      'go.temporal.io/server/service/history.(*visibilityQueueTaskExecutor).processUpsertExecution',
      'go.temporal.io/server/service/history/queues.(*executableImpl).Execute',
      'runtime.goexit',
    ];
    expect(serverPart(upsert)).toBe('visibility: UpsertExecution');
    const failed = [
      'google.golang.org/protobuf/internal/impl.(*MessageInfo).sizePointerSlow',
      'go.temporal.io/server/service/history.(*Handler).RespondActivityTaskFailed',
      'go.temporal.io/server/api/historyservice/v1._HistoryService_RespondActivityTaskFailed_Handler',
      'google.golang.org/grpc.(*Server).processUnaryRPC',
    ];
    expect(serverPart(failed)).toBe('history rpc: RespondActivityTaskFailed');
    expect(serverPart(['x', 'go.temporal.io/api/workflowservice/v1._WorkflowService_PollActivityTaskQueue_Handler'])).toBe('frontend rpc: PollActivityTaskQueue');
    expect(serverPart(['x', 'go.temporal.io/server/service/history.(*timerQueueActiveTaskExecutor).Execute', 'go.temporal.io/server/service/history/queues.(*executableImpl).Execute'])).toBe(
      'history queue: timerQueueActiveTaskExecutor',
    );
    expect(serverPart(['runtime.scanobject', 'runtime.gcDrain', 'runtime.gcBgMarkWorker'])).toBe('go: garbage collector');
    expect(serverPart(['golang.org/x/net/http2.(*Framer).ReadFrame', 'google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams'])).toBe('grpc transport');
    expect(serverPart(['[kernel] finish_task_switch.isra.0', 'runtime.futex', 'runtime.findRunnable', 'runtime.schedule'])).toBe('go: scheduler');
    expect(serverPart(['[kernel] clear_page_erms', 'runtime.sysUsed'])).toBe('go: runtime, other');
    expect(serverPart(['[kernel] clear_page_erms'])).toBe('kernel only');
    expect(serverPart(['github.com/uber-go/tally/v4.(*scope).reportLoop'])).toBe('other');
  });

  it('gives what a window added per event by part against its baseline, largest first, and nothing when either was not profiled', () => {
    const cost = (parts: Record<string, number>) => ({ temporal_profile: { cpu_ms_per_event_by_part: parts } });
    const failing = cost({ 'visibility: UpsertExecution': 3.16, 'grpc transport': 2.97, 'history rpc: StartWorkflowExecution': 1.31 });
    const healthy = cost({ 'visibility: CloseExecution': 3.64, 'grpc transport': 1.69, 'history rpc: StartWorkflowExecution': 1.33 });
    expect(partsAdded(failing, healthy)).toEqual({ 'visibility: UpsertExecution': 3.16, 'grpc transport': 1.28, 'visibility: CloseExecution': -3.64 });
    expect(Object.keys(partsAdded(failing, healthy)!)).toEqual(['visibility: UpsertExecution', 'grpc transport', 'visibility: CloseExecution']);
    expect(partsAdded(failing, { temporal_profile: 'not profiled: `perf` is not installed' })).toBeUndefined();
    expect(partsAdded(failing, undefined)).toBeUndefined();
  });
});
