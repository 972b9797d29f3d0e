/**
 * Checking of the bundles' raw configuration properties against their typed configuration
 * ({@code @ObjectClassDefinition} annotations), memory of the last good configuration, the record of
 * refused values and unknown keys the health checks read, and the gate
 * that holds a component back until its first good configuration.
 */
@Export
@Version("1.3.0")
package org.mpiproxy.api.config;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
