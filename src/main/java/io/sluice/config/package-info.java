/**
 * Settings: the validated {@link io.sluice.config.Settings} and
 * {@link io.sluice.config.LimitSettings}, built from the YAML file ({@link io.sluice.config.ConfigFile})
 * and flags; every error names the flag, or the file, line and key. Every key is documented in
 * {@code conf/sluice.yml}.
 */
package io.sluice.config;
