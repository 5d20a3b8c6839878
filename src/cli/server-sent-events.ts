/** One server-sent event: its name (`message` when it has none) and its data lines, joined. */
export interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * The events of a `text/event-stream` body, as they arrive (the format's subset a
 * shiphook stream uses: `event:` and `data:` lines; comment lines, which keep the
 * connection alive, are skipped). `onChunk` hears every chunk, comments included: what
 * an idle watchdog needs.
 */
export async function* serverSentEvents(body: AsyncIterable<Buffer | string>, onChunk: () => void = () => undefined): AsyncGenerator<ServerSentEvent> {
  let buffered = '';
  const utf8 = new TextDecoder(); // a character split between chunks stays whole
  for await (const chunk of body) {
    onChunk();
    buffered += typeof chunk === 'string' ? chunk : utf8.decode(chunk, { stream: true });
    const blocks = buffered.split(/\r?\n\r?\n/);
    buffered = blocks.pop()!;
    for (const block of blocks) {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}
