/** A typed array constructor that can view a SharedArrayBuffer. */
interface SharedArrayConstructor<T> {
  new (buffer: SharedArrayBuffer): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * A zeroed typed array on a SharedArrayBuffer: posted to a worker thread it is shared, not copied, so the
 * threads of one kNN pass read one copy of a space (parallel-knn-lists.ts). Reads and writes cost what they
 * cost on an ArrayBuffer.
 */
export function sharedArray<T>(type: SharedArrayConstructor<T>, length: number): T {
  return new type(new SharedArrayBuffer(length * type.BYTES_PER_ELEMENT));
}
