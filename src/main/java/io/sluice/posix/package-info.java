/**
 * The commands' dealings with the operating system's service side: POSIX signals (the one place
 * that touches {@code sun.misc.Signal}) and systemd's notifications (READY=1).
 */
package io.sluice.posix;
