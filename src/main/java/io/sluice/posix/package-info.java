/** POSIX signals for the commands: the one place that touches {@code sun.misc.Signal}. */
package io.sluice.posix;
