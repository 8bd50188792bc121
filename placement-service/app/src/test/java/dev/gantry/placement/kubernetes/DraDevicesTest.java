package dev.gantry.placement.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** GPU indices to the devices a claim names, and back, from slices shaped as NVIDIA's driver publishes them. */
class DraDevicesTest {

    @Test
    void aGpuIndexIsItsIndexAttributeNotItsMinor() {
        DraDevices d = DraDevices.of("gpu.nvidia.com", List.of(NvidiaDraSlices.eightGpus("n1")));
        assertThat(d.gpu("n1", 0)).isEqualTo(new DraDevices.DeviceRef("gpu.nvidia.com", "n1", "gpu-7"));
        assertThat(d.place(new DraDevices.DeviceRef("gpu.nvidia.com", "n1", "gpu-7"))).isEqualTo(new DraDevices.GpuPlace("n1", 0));
        assertThat(d.gpu("n1", 8)).isNull();
        assertThat(d.gpu("n2", 0)).isNull();
    }

    @Test
    void withoutIndexOrMinorTheNameGivesTheIndex() {
        ResourceSlice slice = NvidiaDraSlices.eightGpus("n1");
        slice.getSpec().getDevices().forEach(dev -> {
            dev.getAttributes().remove("index");
            dev.getAttributes().remove("minor");
        });
        DraDevices d = DraDevices.of("gpu.nvidia.com", List.of(slice));
        assertThat(d.gpu("n1", 7)).isEqualTo(new DraDevices.DeviceRef("gpu.nvidia.com", "n1", "gpu-7"));
    }

    @Test
    void aMigDeviceIsPlacedOnItsParentGpu() {
        DraDevices d = DraDevices.of("gpu.nvidia.com", List.of(NvidiaDraSlices.eightGpus("n1")));
        assertThat(d.place(new DraDevices.DeviceRef("gpu.nvidia.com", "n1", NvidiaDraSlices.deviceOf(5) + "-mig-1g10gb-19-0")))
                .isEqualTo(new DraDevices.GpuPlace("n1", 5));
    }

    @Test
    void aMigDeviceOfAGpuInMigModeIsFoundByItsUuidAndPlacedOnTheGpuItsNameNames() {
        // the newest driver: GPU 2 is in MIG mode and not published as a GPU device; its devices name their parent's minor
        DraDevices d = DraDevices.of("gpu.nvidia.com", List.of(NvidiaDraSlices.migNode("m1")));
        DraDevices.DeviceRef ref = d.mig("m1", NvidiaDraSlices.migUuidOf("m1", 2, 4));
        assertThat(ref).isEqualTo(new DraDevices.DeviceRef("gpu.nvidia.com", "m1", NvidiaDraSlices.migDeviceOf(2, "3g.40gb", 9, 4)));
        assertThat(d.migOf(ref)).isEqualTo(new DraDevices.MigRef(NvidiaDraSlices.migUuidOf("m1", 2, 4), "3g.40gb"));
        assertThat(d.place(ref)).isEqualTo(new DraDevices.GpuPlace("m1", 2));
        assertThat(d.gpu("m1", 2)).as("no whole device for a GPU in MIG mode").isNull();
        assertThat(d.migOf(d.gpu("m1", 0))).as("a whole GPU is no MIG device").isNull();
        assertThat(d.mig("m1", "MIG-unknown")).isNull();
    }

    @Test
    void anOlderGenerationOfThePoolAndOtherDriversAreLeftOut() {
        ResourceSlice newer = new ResourceSliceBuilder(NvidiaDraSlices.eightGpus("n1")).editMetadata().withName("newer").endMetadata()
                .editSpec().editPool().withGeneration(2L).endPool().withDevices(NvidiaDraSlices.eightGpus("n1").getSpec().getDevices().subList(0, 2))
                .endSpec().build();
        ResourceSlice other = new ResourceSliceBuilder(NvidiaDraSlices.eightGpus("n2")).editSpec().withDriver("net.example.com").endSpec().build();
        DraDevices d = DraDevices.of("gpu.nvidia.com", List.of(NvidiaDraSlices.eightGpus("n1"), newer, other));
        assertThat(d.gpu("n1", 1)).isNotNull();
        assertThat(d.gpu("n1", 2)).as("only in generation 1").isNull();
        assertThat(d.gpu("n2", 0)).isNull();
    }
}
