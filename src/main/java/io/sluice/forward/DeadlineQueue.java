package io.sluice.forward;

/**
 * Attempts in the order they were sent. Every attempt waits the same timeout, so that order is
 * also deadline order, and expiring is a walk from the head that stops at the first live entry not
 * yet due: no timer object per query. An entry is (slot index, serial); it is dead once the slot's
 * serial has moved on, and dead entries are dropped when they reach the head.
 */
final class DeadlineQueue {
    private long[] ring = new long[1024];
    private int head;
    private int size;

    void add(int slot, int serial) {
        if (size == ring.length) {
            grow();
        }
        ring[(head + size) & (ring.length - 1)] = ((long) slot << 32) | (serial & 0xFFFFFFFFL);
        size++;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int peekSlot() {
        return (int) (ring[head] >>> 32);
    }

    int peekSerial() {
        return (int) ring[head];
    }

    void poll() {
        head = (head + 1) & (ring.length - 1);
        size--;
    }

    private void grow() {
        long[] bigger = new long[ring.length * 2];
        int tail = ring.length - head;
        System.arraycopy(ring, head, bigger, 0, tail);
        System.arraycopy(ring, 0, bigger, tail, head);
        ring = bigger;
        head = 0;
    }
}
